/**
 * Property: a reader that loaded a wallet once and then follows it only through the rows written since
 * (applyStoredChanges, at any points of the real timeline, reorgs and replacements included) holds the same
 * lists and balances as a reader loading every row again. Its lists are rebuilt only where a change reaches.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addWallet,
  applyStoredChanges,
  createEngineState,
  parseStoredTransactions,
  WalletListCache,
  type EngineChangeset,
  type EngineState,
  type StoredAddress,
  type StoredChanges,
  type StoredTransaction,
  type WalletConfig,
} from '../../../src/engine/index.js';
import { decodeAddress } from '../../../src/core/address.js';
import { toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { serializeTransaction, txid as txidOf } from '../../../src/core/tx.js';
import { replaceSorted } from '../../../src/engine/list-cache.js';
import { allUpdates, applyAndPersist, freshEngine, MemoryRowStore, timeline } from './support/replay.js';
import { expectSameAsFullLoad } from './support/expected.js';
import type { ScriptDeriver } from '../../../src/engine/index.js';

const updates = allUpdates().map((u) => u.update);

/** What a store returns for "rows written since": the newest row of each transaction, and the removals. */
class PendingRows {
  addresses: StoredAddress[] = [];
  transactions = new Map<string, StoredTransaction>();
  removed = new Set<string>();

  add(changeset: EngineChangeset, walletId: string): void {
    for (const change of changeset.wallets) {
      if (change.walletId !== walletId) continue;
      this.addresses.push(...change.addressesAdded);
      for (const t of [...change.transactionsAdded, ...change.transactionsUpdated]) {
        this.transactions.set(t.txid, structuredClone(t));
        this.removed.delete(t.txid);
      }
      for (const txid of change.transactionsRemoved) {
        this.transactions.delete(txid);
        this.removed.add(txid);
      }
    }
  }

  take(store: MemoryRowStore, walletId: string): StoredChanges {
    const changes = { sync: store.rows(walletId).sync, addresses: this.addresses, transactions: [...this.transactions.values()], removedTransactions: [...this.removed] };
    this.addresses = [];
    this.transactions = new Map();
    this.removed = new Set();
    return changes;
  }
}

interface Reader {
  config: WalletConfig;
  state: EngineState;
  lists: WalletListCache;
  pending: PendingRows;
}

function loadReader(store: MemoryRowStore, config: WalletConfig): Reader {
  const state = createEngineState();
  addWallet(state, config, store.rows(config.walletId));
  return { config, state, lists: new WalletListCache(state, config.walletId), pending: new PendingRows() };
}

describe('following a wallet through the rows written since', () => {
  it('gives the lists of a full load, whenever the reader catches up', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: updates.length, maxLength: updates.length }), fc.integer({ min: 0, max: updates.length - 1 }), (catchUpAfter, loadAfter) => {
        const { state, store, configs } = freshEngine();
        const readers: Reader[] = [];
        updates.forEach((update, step) => {
          const changeset = applyAndPersist(state, store, update);
          for (const reader of readers) reader.pending.add(changeset, reader.config.walletId);
          if (step === loadAfter) for (const config of configs) readers.push(loadReader(store, config));
          if (!catchUpAfter[step] && step !== updates.length - 1) return;
          for (const reader of readers) {
            const id = reader.config.walletId;
            reader.lists.changed(applyStoredChanges(reader.state, id, reader.pending.take(store, id)));
            expectSameAsFullLoad(reader.lists.lists(), store, reader.config);
          }
        });
      }),
      { numRuns: 15 },
    );
  });

  it('gives the same with transactions parsed beforehand and lists built in parts, caught up at every step or once at the end', async () => {
    const parsedRows = (store: MemoryRowStore, id: string) => {
      const { transactions, ...rows } = store.rows(id);
      return { ...rows, parsedTransactions: parseStoredTransactions(id, rows.sync.tip, transactions) };
    };
    let pauses = 0;
    const pause = async () => void (pauses += 1);
    for (const everyStep of [true, false]) {
      const { state, store, configs } = freshEngine();
      const readers = configs.map((config): Reader => {
        const readerState = createEngineState();
        addWallet(readerState, config, parsedRows(store, config.walletId));
        return { config, state: readerState, lists: new WalletListCache(readerState, config.walletId), pending: new PendingRows() };
      });
      for (const [step, update] of updates.entries()) {
        const changeset = applyAndPersist(state, store, update);
        for (const reader of readers) reader.pending.add(changeset, reader.config.walletId);
        if (!everyStep && step !== updates.length - 1) continue;
        for (const reader of readers) {
          const id = reader.config.walletId;
          const { transactions, ...changes } = reader.pending.take(store, id);
          const parsedTransactions = parseStoredTransactions(id, changes.sync.tip, transactions);
          reader.lists.changed(applyStoredChanges(reader.state, id, { ...changes, parsedTransactions }));
          await reader.lists.build(pause);
          expectSameAsFullLoad(reader.lists.lists(), store, reader.config);
        }
      }
      // A reader loading the last rows whole, parsed beforehand, with its lists built in parts.
      for (const config of configs) {
        const fresh = createEngineState();
        addWallet(fresh, config, parsedRows(store, config.walletId));
        const lists = new WalletListCache(fresh, config.walletId);
        await lists.build(pause);
        expectSameAsFullLoad(lists.lists(), store, config);
      }
    }
    expect(pauses).toBeGreaterThan(0);
  });

  it('follows a miner wallet whose coinbases mature block by block, and go stale in reorgs', () => {
    const minerScript = decodeAddress(timeline.addresses.miner, NETWORKS.regtest);
    const derive: ScriptDeriver = (branch, from, count) =>
      Array.from({ length: count }, (_, i) => (branch === 0 && from + i === 0 ? minerScript : Uint8Array.of(0x6a, 0x03, 0xee, branch, from + i)));
    const config: WalletConfig = { walletId: 'miner', gapLimit: 5, derive };
    const state = createEngineState();
    const store = new MemoryRowStore();
    store.persist(addWallet(state, config));
    const reader = loadReader(store, config);
    let immatureSeen = 0n;
    for (const update of updates) {
      reader.pending.add(applyAndPersist(state, store, update), 'miner');
      reader.lists.changed(applyStoredChanges(reader.state, 'miner', reader.pending.take(store, 'miner')));
      const lists = reader.lists.lists();
      expectSameAsFullLoad(lists, store, config);
      if (lists.balances.immature > immatureSeen) immatureSeen = lists.balances.immature;
    }
    expect(immatureSeen).toBeGreaterThan(0n);
  });

  it('keeps the entries a block did not reach', () => {
    const { state, store, configs } = freshEngine();
    const last = updates.length - 1;
    updates.slice(0, last).forEach((update) => applyAndPersist(state, store, update));
    const config = configs.find((c) => store.rows(c.walletId).transactions.length > 5)!;
    const reader = loadReader(store, config);
    const before = reader.lists.lists();
    const changeset = applyAndPersist(state, store, updates[last]!);
    reader.pending.add(changeset, config.walletId);
    reader.lists.changed(applyStoredChanges(reader.state, config.walletId, reader.pending.take(store, config.walletId)));
    const after = reader.lists.lists();
    expectSameAsFullLoad(after, store, config);
    const kept = after.transactions.filter((e) => before.transactions.includes(e));
    expect(kept.length).toBeGreaterThan(0);
  });

  it('counts an output of a transaction already held that pays a script watched only now', () => {
    const script = (branch: number, index: number) => Uint8Array.of(0x00, 0x14, ...new Uint8Array(18), branch, index);
    const config: WalletConfig = { walletId: 'w', gapLimit: 20, derive: (branch, from, count) => Array.from({ length: count }, (_, i) => script(branch, from + i)) };
    const payment = (n: number, outputs: { value: bigint; script: Uint8Array }[]) => {
      const tx = { version: 2, locktime: 0, inputs: [{ txid: n.toString(16).padStart(64, '0'), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] }], outputs };
      return { walletId: 'w', txid: txidOf(tx), hex: toHex(serializeTransaction(tx)), status: 'confirmed' as const, blockHeight: 5, blockHash: tip.hash, blockTime: 1_700_000_000, firstSeen: 1_700_000_000, replaceable: null };
    };
    const tip = { height: 5, hash: 'cd'.repeat(32) };
    // Many payments, so that the lists follow the change instead of being built again.
    const others = Array.from({ length: 12 }, (_, n) => payment(n + 1, [{ value: 1_000n, script: script(0, 0) }]));
    const row = payment(100, [{ value: 10_000n, script: script(0, 0) }, { value: 20_000n, script: script(0, 25) }]);
    const rows = (lastUsedReceive: number) => {
      const address = (branch: 0 | 1, index: number): StoredAddress => ({ walletId: 'w', branch, index, script: toHex(script(branch, index)) });
      const addresses = [...Array.from({ length: lastUsedReceive + 21 }, (_, index) => address(0, index)), ...Array.from({ length: 20 }, (_, index) => address(1, index))];
      return { sync: { walletId: 'w', tip, lastUsedReceive, lastUsedChange: -1 }, addresses, transactions: [...others, row] };
    };
    const store = { rows: () => rows(10) } as unknown as MemoryRowStore;
    const state = createEngineState();
    addWallet(state, config, rows(0));
    const lists = new WalletListCache(state, 'w');
    const before = lists.lists();
    expect(before.unspent).toHaveLength(13);
    const later = rows(10);
    const applied = applyStoredChanges(state, 'w', { ...later, addresses: later.addresses.filter((a) => a.branch === 0 && a.index > 20), transactions: [], removedTransactions: [] });
    expect([...applied.newlyPaying]).toEqual([row.txid]);
    lists.changed(applied);
    const after = lists.lists();
    expect(after.unspent).toHaveLength(14);
    expect(after.transactions.filter((e) => before.transactions.includes(e))).toHaveLength(12);
    expectSameAsFullLoad(after, store, config);
  });

  it('refuses a row that does not follow the stored addresses, and changes nothing', () => {
    const { store, configs } = freshEngine();
    const reader = loadReader(store, configs[0]!);
    const id = configs[0]!.walletId;
    const before = reader.lists.lists();
    const rows = store.rows(id);
    const far = { walletId: id, branch: 0 as const, index: 500, script: '0014' + '11'.repeat(20) };
    expect(() => applyStoredChanges(reader.state, id, { sync: { ...rows.sync, tip: { height: 3, hash: 'cd'.repeat(32) } }, addresses: [far], transactions: [], removedTransactions: [] })).toThrow(/not contiguous/);
    expect(reader.state.wallets.get(id)!.tip).toEqual(rows.sync.tip);
    expect(reader.lists.lists()).toBe(before);
  });
});

describe('replacing items of a sorted list', () => {
  it('gives the sorted list without the removed and with the added items, few or many', () => {
    const order = (a: { key: number; id: number }, b: { key: number; id: number }) => a.key - b.key || a.id - b.id;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 300 }), fc.array(fc.boolean(), { maxLength: 300 }), fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 100 }), (keys, removeFlags, addedKeys) => {
        const previous = keys.map((key, id) => ({ key, id })).sort(order);
        const removed = previous.filter((_, i) => removeFlags[i]);
        const added = addedKeys.map((key, i) => ({ key, id: 1_000 + i }));
        const expected = previous.filter((item) => !removed.includes(item)).concat(added).sort(order);
        expect(replaceSorted(previous, removed, added, order)).toEqual(expected);
      }),
    );
  });
});
