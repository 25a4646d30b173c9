/**
 * The gap limit on real data: w_wpkh receives at index 0, 1, 3, then 19 and 30 in one transaction (block 122).
 * With a gap limit of 20 the engine finds 30 by deriving more and re-checking the block, as Core (keypool 1000)
 * did; with 10 it cannot see 19, so neither 19 nor 30: a gap limit smaller than the wallet's real gaps loses coins.
 */
import { describe, expect, it } from 'vitest';
import { txid, type Transaction } from '../../../src/core/tx.js';
import { addWallet, applyUpdate, createEngineState, getBalances, listTransactions, walletSummary, type EngineChangeset } from '../../../src/engine/index.js';
import { fixtureDeriver } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, freshEngine } from './support/replay.js';

const PAYMENT_19_AND_30 = 'b9bbaf967f76396eaca497febe8748992217dadd086a4e123c8fba2dcaa81926';

function runUntilSnapshot(gapLimit: number, last: number) {
  const engine = freshEngine(gapLimit);
  const changesets: EngineChangeset[] = [];
  for (const { update, snapshotDone } of allUpdates()) {
    changesets.push(applyAndPersist(engine.state, engine.store, update));
    if (snapshotDone === last) break;
  }
  return { ...engine, changesets };
}

describe('gap limit', () => {
  it('derives gapLimit scripts per branch for a new wallet', () => {
    const { state, store } = freshEngine(20);
    expect(walletSummary(state, 'w_tr')).toMatchObject({ derivedReceive: 20, derivedChange: 20, lastUsedReceive: -1, lastUsedChange: -1, tip: null });
    expect(store.rows('w_tr').addresses.map((a) => `${a.branch}/${a.index}`)).toHaveLength(40);
  });

  it('finds index 19 and then 30 of the same transaction, and stores the new scripts in that block changeset', () => {
    const { changesets, state } = runUntilSnapshot(20, 3);
    const withPayment = changesets.find((c) => c.wallets.some((w) => w.transactionsAdded.some((t) => t.txid === PAYMENT_19_AND_30)))!;
    const wpkh = withPayment.wallets.find((w) => w.walletId === 'w_wpkh')!;
    // Index 3 was the last used before: 0..23 derived. 19 -> derive to 39, 30 -> derive to 50.
    expect(wpkh.addressesAdded.map((a) => `${a.branch}/${a.index}`)).toEqual(Array.from({ length: 27 }, (_, i) => `0/${24 + i}`));
    expect(wpkh.sync).toMatchObject({ lastUsedReceive: 30 });
    expect(walletSummary(state, 'w_wpkh')).toMatchObject({ lastUsedReceive: 30, derivedReceive: 51 });
    expect(getBalances(state, 'w_wpkh').confirmed).toBe(190_000_000n); // 1 + 0.5 + 0.25 + 0.1 + 0.05 BTC
  });

  it('with a gap limit of 10 the payment to index 19 and 30 stays invisible', () => {
    const { state } = runUntilSnapshot(10, 3);
    expect(walletSummary(state, 'w_wpkh').lastUsedReceive).toBe(3);
    expect(getBalances(state, 'w_wpkh').confirmed).toBe(175_000_000n);
  });

  it('a changeset of an update that changes nothing for a wallet does not list it', () => {
    const { state } = runUntilSnapshot(20, 3);
    expect(applyUpdate(state, { type: 'mempool', transactions: [] })).toEqual({ wallets: [] });
  });

  it('re-checks earlier transactions of the block, and children of what the re-check found', () => {
    const derive = fixtureDeriver('w_wpkh');
    const receive = (index: number) => derive(0, index, 1)[0]!;
    const external = Uint8Array.of(0x00, 0x14, ...new Array(20).fill(7));
    const tx = (prev: string, vout: number, outputs: Transaction['outputs']): Transaction => ({
      version: 2,
      locktime: 0,
      inputs: [{ txid: prev, vout, scriptSig: new Uint8Array(), sequence: 0xffffffff, witness: [new Uint8Array(64)] }],
      outputs,
    });
    const pays35 = tx('11'.repeat(32), 0, [{ value: 70_000n, script: receive(35) }]);
    const pays19 = tx('22'.repeat(32), 0, [{ value: 19_000n, script: receive(19) }]);
    const spends35 = tx(txid(pays35), 0, [{ value: 69_000n, script: external }]);
    const state = createEngineState();
    addWallet(state, { walletId: 'w', gapLimit: 20, derive });
    applyUpdate(state, {
      type: 'block_connected',
      height: 500,
      hash: 'ab'.repeat(32),
      prevHash: 'cd'.repeat(32),
      time: 1_800_000_000,
      transactions: [pays35, pays19, spends35],
    });
    // 19 is within the first 20 scripts; deriving to 39 reveals 35 in the earlier transaction, whose coin the
    // later transaction spends.
    expect(walletSummary(state, 'w')).toMatchObject({ lastUsedReceive: 35, derivedReceive: 56 });
    expect(listTransactions(state, 'w').map((e) => [e.txid, e.category, e.netSat])).toEqual(
      expect.arrayContaining([
        [txid(pays35), 'receive', 70_000n],
        [txid(pays19), 'receive', 19_000n],
        [txid(spends35), 'send', -70_000n],
      ]),
    );
    expect(getBalances(state, 'w')).toEqual({ confirmed: 19_000n, unconfirmed: 0n, immature: 0n });
  });
});
