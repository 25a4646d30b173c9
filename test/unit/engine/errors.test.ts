/** Updates and stored rows the engine refuses, each with a typed error, leaving nothing half-applied. */
import { describe, expect, it } from 'vitest';
import { addWallet, applyUpdate, createEngineState, EngineError, getBalances, listTransactions, type ChainUpdate } from '../../../src/engine/index.js';
import { fixtureDeriver } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, connected, disconnected, freshEngine, timeline } from './support/replay.js';

const engineError = (code: string) => expect.objectContaining({ name: 'EngineError', code });

function engineAtSnapshot(index: number) {
  const engine = freshEngine();
  for (const { update, snapshotDone } of allUpdates()) {
    applyAndPersist(engine.state, engine.store, update);
    if (snapshotDone === index) break;
  }
  return engine;
}

describe('engine input checks', () => {
  it('refuses a block that does not extend the tip, and one that is not the tip when disconnecting', () => {
    const { state } = engineAtSnapshot(2);
    const chain: string[] = timeline.snapshots[2].chain;
    expect(() => applyUpdate(state, connected(chain[100]!))).toThrow(engineError('tip_mismatch'));
    expect(() => applyUpdate(state, disconnected(chain[100]!))).toThrow(engineError('tip_mismatch'));
    // Skipping a block is refused too.
    expect(() => applyUpdate(state, connected(timeline.snapshots[3].chain[123]))).toThrow(engineError('tip_mismatch'));
  });

  it('refuses malformed updates', () => {
    const state = createEngineState();
    addWallet(state, { walletId: 'w', derive: fixtureDeriver('w_wpkh') });
    const bad = [
      { type: 'block_connected', height: -1, hash: 'ab'.repeat(32), prevHash: '00'.repeat(32), time: 1, transactions: [] },
      { type: 'block_connected', height: 1, hash: 'AB'.repeat(32), prevHash: '00'.repeat(32), time: 1, transactions: [] },
      { type: 'block_connected', height: 1, hash: 'ab'.repeat(32), prevHash: '00'.repeat(32), time: 1.5, transactions: [] },
      { type: 'mempool', transactions: [{ tx: undefined, time: 1 }] },
      { type: 'mempool', transactions: 'nope' },
      { type: 'reorg' },
    ] as unknown as ChainUpdate[];
    for (const update of bad) expect(() => applyUpdate(state, update)).toThrow(EngineError);
    expect(() => applyUpdate(state, { type: 'mempool', transactions: [] }, { walletIds: ['other'] })).toThrow(engineError('unknown_wallet'));
  });

  it('refuses a wallet twice, a bad gap limit and a deriver that returns the wrong number of scripts', () => {
    const state = createEngineState();
    addWallet(state, { walletId: 'w', derive: fixtureDeriver('w_wpkh') });
    expect(() => addWallet(state, { walletId: 'w', derive: fixtureDeriver('w_wpkh') })).toThrow(engineError('duplicate_wallet'));
    expect(() => addWallet(state, { walletId: 'g', gapLimit: 0, derive: fixtureDeriver('w_wpkh') })).toThrow(engineError('invalid_update'));
    expect(() => addWallet(state, { walletId: 'd', derive: () => [] })).toThrow(engineError('invalid_update'));
  });

  it('refuses stored rows that do not describe a consistent wallet, and keeps nothing of them', () => {
    const { store, configs } = engineAtSnapshot(5);
    const config = configs[0]!;
    const good = store.rows(config.walletId);
    const corruptions = [
      { ...good, transactions: good.transactions.map((t, i) => (i === 0 ? { ...t, hex: t.hex.slice(0, -2) + '01' } : t)) },
      { ...good, transactions: good.transactions.map((t, i) => (i === 0 ? { ...t, txid: 'ab'.repeat(32) } : t)) },
      { ...good, transactions: good.transactions.map((t, i) => (i === 0 ? { ...t, status: 'pending' as never } : t)) },
      { ...good, transactions: good.transactions.map((t, i) => (i === 0 ? { ...t, blockHeight: 999 } : t)) },
      { ...good, transactions: good.transactions.map((t, i) => (i === 0 ? { ...t, blockTime: null } : t)) },
      { ...good, addresses: good.addresses.filter((a) => !(a.branch === 0 && a.index === 3)) },
      { ...good, sync: { ...good.sync, walletId: 'someone-else' } },
      { ...good, sync: { ...good.sync, lastUsedReceive: 1.5 } },
    ];
    const state = createEngineState();
    for (const rows of corruptions) expect(() => addWallet(state, config, rows)).toThrow(engineError('invalid_stored_state'));
    expect(state.wallets.size).toBe(0);
    expect(state.scriptIndex.size).toBe(0);
    expect(state.scriptKeys.size).toBe(0);
    expect(state.txOwners.size).toBe(0);
    addWallet(state, config, good);
    expect(getBalances(state, config.walletId).confirmed).toBe(159_999_091n);
    expect(listTransactions(state, config.walletId)).toHaveLength(5); // 16364f, 3f8d16, b9bbaf, 7dbf08, 1d6b1e
  });
});
