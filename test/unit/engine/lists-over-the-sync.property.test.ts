/**
 * Property: lists kept over the state the sync changes (the reads of a large wallet, shared-lists.ts), told each
 * update through `listsKept`, equal the lists of a reader loading the stored rows, at every update of the real
 * timeline (reorgs, replacements, drops): also when their build in parts began at any update and the sync applied
 * any number of updates between two of its parts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyUpdate, stateOfWallet, WalletListCache, type AppliedChanges, type ChainUpdate } from '../../../src/engine/index.js';
import { expectSameAsFullLoad } from './support/expected.js';
import { FIXTURE_WALLET_IDS } from './support/fixture-wallets.js';
import { allUpdates, freshEngine } from './support/replay.js';

const updates: ChainUpdate[] = allUpdates().map((u) => u.update);

describe('lists kept over the sync state', () => {
  it('equal a full load of the stored rows after every update, whenever their build began and however the updates fell between its parts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: updates.length - 1 }),
        fc.array(fc.nat({ max: 3 }), { minLength: 12, maxLength: 12 }),
        fc.constantFrom(...FIXTURE_WALLET_IDS),
        async (buildAt, appliedPerPause, walletId) => {
          const { state, store, configs } = freshEngine();
          const config = configs.find((c) => c.walletId === walletId)!;
          const kept: { lists?: WalletListCache } = {}; // from the update where the build begins
          const told: AppliedChanges[] = [];
          const listsKept = {
            has: (id: string) => id === walletId && kept.lists !== undefined,
            changed: (_id: string, applied: AppliedChanges) => {
              told.push(applied);
              kept.lists!.changed(applied);
            },
          };
          let next = 0;
          const applyNext = () => store.persist(applyUpdate(state, updates[next++]!, { listsKept }));
          while (next < buildAt) applyNext();

          const lists = (kept.lists = new WalletListCache(stateOfWallet(state.wallets.get(walletId)!), walletId));
          let pauses = 0;
          await lists.build(async () => {
            for (let k = appliedPerPause[pauses++ % appliedPerPause.length]!; k > 0 && next < updates.length; k--) applyNext();
          });
          expectSameAsFullLoad(lists.lists(), store, config);
          while (next < updates.length) {
            applyNext();
            expectSameAsFullLoad(lists.lists(), store, config);
          }
          expect(told.length).toBeGreaterThan(0); // the updates after the build began were told
        },
      ),
      { numRuns: 40 },
    );
  });
});
