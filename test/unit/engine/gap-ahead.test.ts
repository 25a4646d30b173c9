/**
 * What an update will make wallets derive, read before it is applied (the service derives it ahead, in parts):
 * block 122 pays w_wpkh at receive index 19 and 30 while it has derived 0..23 (last used 3, gap limit 20).
 */
import { describe, expect, it } from 'vitest';
import { txid } from '../../../src/core/tx.js';
import { gapAheadOf, walletSummary } from '../../../src/engine/index.js';
import { FIXTURE_WALLET_IDS } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, freshEngine } from './support/replay.js';

const PAYMENT_19_AND_30 = 'b9bbaf967f76396eaca497febe8748992217dadd086a4e123c8fba2dcaa81926';

describe('gap ahead of an update', () => {
  it('names the branch whose gap a payment near its end extends, and nothing for the other updates', () => {
    const { state, store } = freshEngine(20);
    let seen = false;
    for (const { update } of allUpdates()) {
      const ahead = gapAheadOf(state, update, FIXTURE_WALLET_IDS);
      const pays = update.type === 'block_connected' && update.transactions.some((tx) => txid(tx) === PAYMENT_19_AND_30);
      if (pays) {
        // Index 19 needs 0..39; index 30 is derived only by applying the block, as it is not watched before.
        expect(ahead).toContainEqual({ walletId: 'w_wpkh', branch: 0, count: 40 });
        expect(ahead.filter((a) => a.walletId === 'w_wpkh')).toHaveLength(1);
        // Out of scope: nothing.
        expect(gapAheadOf(state, update, ['w_tr'])).toEqual([]);
      }
      for (const { walletId, branch, count } of ahead) {
        const summary = walletSummary(state, walletId);
        expect(count).toBeGreaterThan(branch === 0 ? summary.derivedReceive : summary.derivedChange);
      }
      applyAndPersist(state, store, update);
      if (pays) {
        expect(walletSummary(state, 'w_wpkh').derivedReceive).toBe(51);
        seen = true;
        break;
      }
    }
    expect(seen).toBe(true);
  });
});
