/**
 * Restart: the engine state rebuilt from the rows the changesets produced (as a store keeps them) continues
 * exactly like the state that never stopped: same changesets, same views, same answers as Core.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { getBalances, listTransactions, listUnspent, walletSummary, type EngineChangeset, type EngineState } from '../../../src/engine/index.js';
import { expectBalancesAndUtxos } from './support/expected.js';
import { FIXTURE_WALLET_IDS } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, freshEngine, restoredEngine, timeline } from './support/replay.js';

const updates = allUpdates();

const views = (state: EngineState) =>
  FIXTURE_WALLET_IDS.map((id) => ({
    id,
    summary: walletSummary(state, id),
    balances: getBalances(state, id),
    utxos: listUnspent(state, id),
    transactions: listTransactions(state, id),
  }));

interface Run {
  changesets: EngineChangeset[];
  snapshots: Map<number, ReturnType<typeof views>>;
}

function run(restartAfter: number | null): Run {
  const engine = freshEngine();
  let state = engine.state;
  const result: Run = { changesets: [], snapshots: new Map() };
  updates.forEach(({ update, snapshotDone }, i) => {
    if (i === restartAfter) state = restoredEngine(engine.store, engine.configs);
    result.changesets.push(applyAndPersist(state, engine.store, update));
    if (snapshotDone !== null) {
      result.snapshots.set(snapshotDone, views(state));
      for (const id of FIXTURE_WALLET_IDS) expectBalancesAndUtxos(state, id, timeline.snapshots[snapshotDone].expected[id]);
    }
  });
  return result;
}

describe('engine restart from stored rows', () => {
  let continuous: Run;
  beforeAll(() => {
    continuous = run(null);
  });

  // Restart points: before each of the last blocks and mempool snapshots, including between the
  // disconnect and the connects of the reorg (snapshot 7).
  const firstInteresting = updates.findIndex((u) => u.update.type === 'mempool');
  const reorgCut = updates.findIndex((u) => u.update.type === 'block_disconnected') + 1;
  const cuts = [...new Set([firstInteresting, ...Array.from({ length: updates.length - firstInteresting }, (_, k) => firstInteresting + k), reorgCut])];

  it('the restart points include the middle of the reorg', () => {
    expect(updates[reorgCut - 1]!.update.type).toBe('block_disconnected');
    expect(updates[reorgCut]!.update.type).toBe('block_connected');
    expect(cuts.length).toBeGreaterThan(15);
  });

  for (const cut of cuts) {
    it(`restarting before update ${cut} (${updates[cut]!.update.type}) continues identically`, () => {
      const restarted = run(cut);
      expect(restarted.changesets.slice(cut)).toEqual(continuous.changesets.slice(cut));
      for (const [index, snapshotViews] of continuous.snapshots) {
        const theirs = restarted.snapshots.get(index)!;
        // Map order after a restore is the store's order; views are compared as sorted data.
        expect(theirs).toEqual(snapshotViews);
      }
    });
  }
});
