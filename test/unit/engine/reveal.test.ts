/**
 * Receive addresses handed out beyond the gap stay watched. On real data: w_wpkh receives at 0, 1, 3, then
 * 19 and 30 in one transaction (block 122). With a gap limit of 10 the engine alone never sees 19 or 30
 * (gap-limit.test.ts); once 30 was revealed, both are found and the wallet matches Bitcoin Core.
 */
import { describe, expect, it } from 'vitest';
import { txid, type Transaction } from '../../../src/core/tx.js';
import {
  addWallet,
  applyUpdate,
  createEngineState,
  getBalances,
  listUnspent,
  walletSummary,
  watchRevealed,
  type EngineChangeset,
  type EngineState,
} from '../../../src/engine/index.js';
import { expectBalancesAndUtxos } from './support/expected.js';
import { fixtureDeriver } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, freshEngine, timeline, type MemoryRowStore } from './support/replay.js';

const engineError = (code: string) => expect.objectContaining({ name: 'EngineError', code });
const paths = (changeset: EngineChangeset) => changeset.wallets.flatMap((w) => w.addressesAdded.map((a) => `${w.walletId} ${a.branch}/${a.index}`));

/** Replays the timeline up to the end of snapshot `last`, with `beforeEach` run before every update. */
function replayUntil(state: EngineState, store: MemoryRowStore, last: number, beforeEach: () => void = () => {}): void {
  for (const { update, snapshotDone } of allUpdates()) {
    beforeEach();
    applyAndPersist(state, store, update);
    if (snapshotDone === last) break;
  }
}

const receiveIndexes = (state: EngineState, walletId: string) => [...new Set(listUnspent(state, walletId).filter((u) => u.branch === 0).map((u) => u.index))].sort((a, b) => a - b);

describe('revealed receive addresses', () => {
  it('derives scripts to the revealed index + gap limit, once, and only on the receive branch', () => {
    const { state, store } = freshEngine(10);
    const revealed = watchRevealed(state, 'w_wpkh', 30);
    store.persist(revealed);
    expect(paths(revealed)).toEqual(Array.from({ length: 31 }, (_, i) => `w_wpkh 0/${10 + i}`));
    expect(revealed.wallets[0]!.sync).toEqual({ walletId: 'w_wpkh', tip: null, lastUsedReceive: -1, lastUsedChange: -1 });
    expect(walletSummary(state, 'w_wpkh')).toMatchObject({ lastRevealedReceive: 30, lastUsedReceive: -1, derivedReceive: 41, derivedChange: 10 });
    // The same or a lower index (an older read) changes nothing.
    expect(watchRevealed(state, 'w_wpkh', 30)).toEqual({ wallets: [] });
    expect(watchRevealed(state, 'w_wpkh', 4)).toEqual({ wallets: [] });
    expect(walletSummary(state, 'w_wpkh').lastRevealedReceive).toBe(30);
    expect(paths(watchRevealed(state, 'w_tr', 5))).toEqual(Array.from({ length: 6 }, (_, i) => `w_tr 0/${10 + i}`));
  });

  it('finds a payment to a revealed index beyond the gap limit: the wallet matches Core', () => {
    const { state, store } = freshEngine(10);
    store.persist(watchRevealed(state, 'w_wpkh', 30));
    replayUntil(state, store, 3);
    expect(walletSummary(state, 'w_wpkh')).toMatchObject({ lastUsedReceive: 30, lastRevealedReceive: 30, derivedReceive: 41 });
    expect(receiveIndexes(state, 'w_wpkh')).toEqual([0, 1, 3, 19, 30]);
    expectBalancesAndUtxos(state, 'w_wpkh', timeline.snapshots[3].expected.w_wpkh);
  });

  it('watches exactly to the revealed index + gap: revealing 19 with a gap of 10 finds 19, not 30', () => {
    const { state, store } = freshEngine(10);
    store.persist(watchRevealed(state, 'w_wpkh', 19));
    replayUntil(state, store, 3);
    // 19 used: watched to 29, so 30 (in the same transaction) stays beyond the gap.
    expect(walletSummary(state, 'w_wpkh')).toMatchObject({ lastUsedReceive: 19, derivedReceive: 30 });
    expect(receiveIndexes(state, 'w_wpkh')).toEqual([0, 1, 3, 19]);
    // Below the last used index (w_tr used 3): remembered, nothing to derive or store.
    expect(walletSummary(state, 'w_tr')).toMatchObject({ lastUsedReceive: 3, derivedReceive: 14 });
    expect(watchRevealed(state, 'w_tr', 2)).toEqual({ wallets: [] });
    expect(walletSummary(state, 'w_tr')).toMatchObject({ lastRevealedReceive: 2, derivedReceive: 14 });
  });

  it('a reveal between two blocks is watched from the next block on', () => {
    const { state, store } = freshEngine(10);
    let updates = 0;
    // Revealed after the first few blocks (long before block 122 pays 30), as a sync pass reads it anew.
    replayUntil(state, store, 3, () => {
      if (++updates === 5) store.persist(watchRevealed(state, 'w_wpkh', 30));
    });
    expectBalancesAndUtxos(state, 'w_wpkh', timeline.snapshots[3].expected.w_wpkh);
  });

  it('a stored revealed index is watched again after a restart; restoring what was persisted derives nothing', () => {
    const { state, store, configs } = freshEngine(10);
    store.persist(watchRevealed(state, 'w_wpkh', 30));
    const config = configs.find((c) => c.walletId === 'w_wpkh')!;
    const rows = store.rows('w_wpkh');

    const restarted = createEngineState();
    expect(addWallet(restarted, config, { ...rows, lastRevealedReceive: 30 })).toEqual({ wallets: [] });
    expect(walletSummary(restarted, 'w_wpkh')).toMatchObject({ lastRevealedReceive: 30, derivedReceive: 41 });

    // Rows written before the scripts were (another instance revealed since): loading derives them.
    const older = { ...rows, addresses: rows.addresses.filter((a) => a.branch === 1 || a.index < 10) };
    const fresh = createEngineState();
    expect(paths(addWallet(fresh, config, { ...older, lastRevealedReceive: 30 }))).toEqual(Array.from({ length: 31 }, (_, i) => `w_wpkh 0/${10 + i}`));
  });

  it('finds a payment to a revealed index far past the gap in the block that pays it', () => {
    const derive = fixtureDeriver('w_wpkh');
    const pays100: Transaction = {
      version: 2,
      locktime: 0,
      inputs: [{ txid: '11'.repeat(32), vout: 0, scriptSig: new Uint8Array(), sequence: 0xffffffff, witness: [new Uint8Array(64)] }],
      outputs: [{ value: 123_456n, script: derive(0, 100, 1)[0]! }],
    };
    const block = { type: 'block_connected' as const, height: 500, hash: 'ab'.repeat(32), prevHash: 'cd'.repeat(32), time: 1_800_000_000, transactions: [pays100] };

    const unwatched = createEngineState();
    addWallet(unwatched, { walletId: 'w', gapLimit: 20, derive });
    applyUpdate(unwatched, block);
    expect(getBalances(unwatched, 'w').confirmed).toBe(0n);

    const state = createEngineState();
    addWallet(state, { walletId: 'w', gapLimit: 20, derive });
    watchRevealed(state, 'w', 100);
    const changes = applyUpdate(state, block);
    expect(changes.wallets[0]!.transactionsAdded.map((t) => t.txid)).toEqual([txid(pays100)]);
    expect(listUnspent(state, 'w')).toMatchObject([{ txid: txid(pays100), vout: 0, valueSat: 123_456n, branch: 0, index: 100 }]);
    expect(walletSummary(state, 'w')).toMatchObject({ lastUsedReceive: 100, derivedReceive: 121 });
  });

  it('refuses an unknown wallet and an invalid index, in calls and in stored rows', () => {
    const { state, store, configs } = freshEngine(10);
    expect(() => watchRevealed(state, 'nope', 3)).toThrow(engineError('unknown_wallet'));
    for (const bad of [1.5, -2, Number.NaN, '3' as unknown as number]) expect(() => watchRevealed(state, 'w_wpkh', bad)).toThrow(engineError('invalid_update'));
    expect(walletSummary(state, 'w_wpkh').lastRevealedReceive).toBe(-1);
    const restarted = createEngineState();
    expect(() => addWallet(restarted, configs[0]!, { ...store.rows(configs[0]!.walletId), lastRevealedReceive: -5 })).toThrow(engineError('invalid_stored_state'));
    expect(restarted.wallets.size).toBe(0);
  });
});
