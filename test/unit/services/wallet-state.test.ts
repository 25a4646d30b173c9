/** Wallet views built from a real SQLite store: one load per stored revision, however many readers. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/repositories.js';
import { toHex } from '../../../src/core/bytes.js';
import { scriptAddress } from '../../../src/services/wallet-format.js';
import { WalletScriptsCache, WalletStateCache } from '../../../src/services/wallet-state.js';
import { storedFixtureWallet } from '../../support/fixtures.js';
import { openTestSqlite, type OpenedStore } from '../../support/stores.js';
import { writePayments } from '../../integration/large-wallet.support.js';


const wallet = storedFixtureWallet('w_wpkh', { id: 'w-state', alias: 'state', name: 'State' });

describe('wallet state cache', () => {
  let opened: OpenedStore;
  let store: Store;
  let chainReads: number;
  let wholeReads: number;
  let changeReads: number;
  let slicesTaken: number[];
  let afterSlice: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    opened = await openTestSqlite();
    store = opened.store;
    await store.users.insert({ name: 'alice', passwordHash: 'x', isAdmin: false, createdAt: 1 });
    await store.wallets.insert(wallet, []);
    chainReads = 0;
    wholeReads = 0;
    changeReads = 0;
    slicesTaken = [];
    afterSlice = undefined;
    const changesSince = store.wallets.chainChangesSince.bind(store.wallets);
    store.wallets.chainChangesSince = (id, revision) => {
      changeReads++;
      return changesSince(id, revision);
    };
    const chainRows = store.wallets.chainRows.bind(store.wallets);
    store.wallets.chainRows = (id) => {
      wholeReads++;
      return chainRows(id);
    };
    // A load reads the rows in slices (a whole read only when the wallet changed meanwhile): one chain read each.
    const inSlices = store.wallets.chainRowsInSlices.bind(store.wallets);
    store.wallets.chainRowsInSlices = (id, sliceRows, take) => {
      chainReads++;
      return inSlices(id, sliceRows, async (transactions, head) => {
        slicesTaken.push(transactions.length);
        await take(transactions, head);
        await afterSlice?.();
      });
    };
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('loads one state for concurrent readers of a revision, and reads only the changed rows for the next one', async () => {
    const cache = new WalletStateCache(store, new WalletScriptsCache());
    const views = await Promise.all(Array.from({ length: 20 }, () => cache.view(wallet)));
    expect(chainReads).toBe(1);
    for (const view of views) expect(view.state).toBe(views[0]!.state);
    expect(views[0]!.revision).toBe(0);

    const sync = { walletId: wallet.id, tip: { height: 1, hash: 'ab'.repeat(32) }, lastUsedReceive: -1, lastUsedChange: -1 };
    const revision = await store.transaction((repos) =>
      repos.wallets.applyChange({ walletId: wallet.id, addressesAdded: [], transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [], sync }, 0),
    );
    const next = await Promise.all(Array.from({ length: 5 }, () => cache.view({ ...wallet, revision })));
    expect(chainReads).toBe(1);
    expect(changeReads).toBe(1);
    expect(next[0]!.revision).toBe(1);
    expect(next[0]!.summary.tip).toEqual(sync.tip);
    // The earlier view keeps its revision's summary and lists.
    expect(views[0]!.summary.tip).toBeNull();
    expect(views[0]!.lists.tipHeight).toBeNull();
    expect(next[0]!.lists.tipHeight).toBe(1);
  });

  it('loads the wallet again after a rescan started its rows again', async () => {
    const cache = new WalletStateCache(store, new WalletScriptsCache());
    await cache.view(wallet);
    const revision = await store.transaction((repos) => repos.wallets.resetChain(wallet.id, 0));
    const view = await cache.view({ ...wallet, revision });
    expect(view.revision).toBe(revision);
    expect(changeReads).toBe(1);
    expect(chainReads).toBe(2);
  });

  it('keeps the states of the wallets read last, up to its bound, and loads a dropped one again when read', async () => {
    const others = [1, 2].map((n) => ({ ...wallet, id: `w-state-${n}`, alias: `state-${n}` }));
    for (const other of others) await store.wallets.insert(other, []);
    const cache = new WalletStateCache(store, new WalletScriptsCache(), { count: 2 });
    const first = await cache.view(wallet);
    await cache.view(others[0]!);
    await cache.view(wallet); // read again: now the last read
    expect(chainReads).toBe(2);
    await cache.view(others[1]!); // drops others[0], the least recently read
    expect(chainReads).toBe(3);
    expect((await cache.view(wallet)).state).toBe(first.state);
    expect(chainReads).toBe(3);
    const again = await cache.view(others[0]!);
    expect(chainReads).toBe(4);
    expect(again.summary).toEqual({ ...first.summary, walletId: others[0]!.id });
  });

  it('loads a large wallet\'s transactions in slices, and reads it whole when the sync wrote it between two slices', async () => {
    const txids = await writePayments(store, wallet.alias, 6_000);
    const stored = (await store.wallets.findById(wallet.id))!;
    wholeReads = 0; // the writing's own
    const cache = new WalletStateCache(store, new WalletScriptsCache());
    const view = await cache.view(stored);
    expect(slicesTaken).toEqual(Array.from({ length: 6 }, () => 1_000));
    expect(wholeReads).toBe(0);
    expect(view.revision).toBe(stored.revision);
    expect(view.lists.transactions.length).toBe(6_000);
    expect(new Set(view.lists.transactions.map((e) => e.txid))).toEqual(new Set(txids));

    // Another service reading the same wallet while a sync write lands after its first slice.
    let written: number | undefined;
    afterSlice = async () => {
      if (written !== undefined) return;
      const rows = (await store.wallets.chainRows(wallet.id))!;
      const sync = { ...rows.sync, tip: { height: rows.sync.tip!.height + 1, hash: 'cd'.repeat(32) } };
      const removed = rows.transactions[0]!.txid;
      written = await store.transaction((repos) => repos.wallets.applyChange({ walletId: wallet.id, addressesAdded: [], transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [removed], sync }, rows.revision));
    };
    slicesTaken = [];
    wholeReads = 0;
    const other = new WalletStateCache(store, new WalletScriptsCache());
    const after = await other.view(stored);
    expect(slicesTaken).toEqual([1_000]); // the second slice saw the new revision: nothing of the first is kept
    expect(wholeReads).toBe(2); // the write's own read of the rows, then the load's whole read
    expect(after.revision).toBe(written);
    expect(after.lists.transactions.length).toBe(5_999);
    expect(after.summary.tip?.hash).toBe('cd'.repeat(32));
  });

  it('lets the next reader try again after a failed load', async () => {
    const cache = new WalletStateCache(store, new WalletScriptsCache());
    await expect(Promise.all([cache.view({ ...wallet, id: 'gone' }), cache.view({ ...wallet, id: 'gone' })])).rejects.toThrow(/vanished/);
    expect(chainReads).toBe(1);
    await expect(cache.view({ ...wallet, id: 'gone' })).rejects.toThrow(/vanished/);
    expect(chainReads).toBe(2);
  });
});

describe('wallet scripts: the addresses shown for coins', () => {
  it('are each script\'s own address, kept per derived index only while the script given is the one encoded', () => {
    const scripts = new WalletScriptsCache().get(wallet);
    const [first, second] = scripts.derive(0, 0, 2).map(toHex);
    const expected = [scriptAddress(first!, 'regtest'), scriptAddress(second!, 'regtest')];
    expect(expected[0]).toMatch(/^bcrt1q/);
    expect(scripts.addressOf(0, 0, first!)).toBe(expected[0]);
    expect(scripts.addressOf(0, 0, first!)).toBe(expected[0]);
    // Another script said to be at that index gets its own address, and the kept one stays right.
    expect(scripts.addressOf(0, 0, second!)).toBe(expected[1]);
    expect(scripts.addressOf(0, 0, first!)).toBe(expected[0]);
    // An index far past those the wallet derived (not kept): the right address all the same.
    expect(scripts.addressOf(1, 5_000, first!)).toBe(expected[0]);
    expect(scripts.addressOf(1, 5_000, second!)).toBe(expected[1]);
  });
});
