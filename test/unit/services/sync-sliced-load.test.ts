/**
 * The sync loads a wallet past its batched read in slices (real SQLite store, a chain source whose tip is the
 * wallet's): a write landing between two slices makes it read the wallet again, never hold a mix of two revisions.
 * The reads then take their lists over the sync's record (shared-lists.ts) without loading the wallet themselves.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChainFollower } from '../../../src/chain/follower.js';
import type { ChainTip } from '../../../src/chain/types.js';
import { PsbtChainReconciler } from '../../../src/services/psbts/chain-reconciler.js';
import { SharedLists } from '../../../src/services/shared-lists.js';
import { ALWAYS_LEADER } from '../../../src/services/sync/leadership.js';
import { SyncService } from '../../../src/services/sync/sync-service.js';
import { WalletScriptsCache, WalletStateCache } from '../../../src/services/wallet-state.js';
import type { Store } from '../../../src/store/repositories.js';
import { storedFixtureWallet } from '../../support/fixtures.js';
import { openTestSqlite, type OpenedStore } from '../../support/stores.js';
import { writePayments } from '../../integration/large-wallet.support.js';

const wallet = storedFixtureWallet('w_wpkh', { id: 'w-sliced', alias: 'sliced', name: 'Sliced' });

/** A chain whose tip is `tip` and has nothing new: the sync loads its wallets and follows no block. */
const chainAt = (tip: ChainTip): ChainFollower => ({
  verifyNetwork: () => Promise.resolve(),
  tip: () => Promise.resolve(tip),
  follow: async function* () {},
  mempool: () => Promise.resolve({ type: 'mempool', transactions: [] }),
});

describe('the sync loading a large wallet in slices', () => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await openTestSqlite();
    store = opened.store;
    await store.users.insert({ name: 'alice', passwordHash: 'x', isAdmin: false, createdAt: 1 });
    await store.wallets.insert(wallet, []);
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('reads the wallet again when it is written between two slices, then shares its record with the reads', async () => {
    const txids = await writePayments(store, wallet.alias, 2_500);
    const rows = (await store.wallets.chainRows(wallet.id))!;
    // Between the first and second slice of the sync's first read: one transaction removed (a rescan, another writer).
    let slices = 0;
    let written: number | undefined;
    const inSlices = store.wallets.chainRowsInSlices.bind(store.wallets);
    store.wallets.chainRowsInSlices = (id, sliceRows, take) =>
      inSlices(id, sliceRows, async (transactions, head) => {
        slices++;
        await take(transactions, head);
        if (written !== undefined) return;
        const change = { walletId: wallet.id, addressesAdded: [], transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [txids[0]!], sync: rows.sync };
        written = await store.transaction((repos) => repos.wallets.applyChange(change, rows.revision));
      });

    const sharedLists = new SharedLists(1);
    const scripts = new WalletScriptsCache();
    const sync = new SyncService({ store, follower: chainAt(rows.sync.tip!), scripts, leadership: ALWAYS_LEADER, psbts: new PsbtChainReconciler(Date.now), chainRowsPerRead: 10, sharedLists });
    expect((await sync.runOnce()).ran).toBe(true);
    expect(slices).toBe(1 + 3); // the first read stopped at the write; the second read all 2,499 rows (1,000 a slice)
    const held = sync.heldWallet(wallet.id)!;
    expect(held.revision).toBe(written);
    expect(held.wallet.txs.size).toBe(2_499);
    expect(held.wallet.txs.has(txids[0]!)).toBe(false);

    let ownLoads = 0;
    store.wallets.chainRowsInSlices = (...args) => {
      ownLoads++;
      return inSlices(...args);
    };
    const reads = new WalletStateCache(store, scripts, {}, undefined, sharedLists);
    const view = await reads.view((await store.wallets.findById(wallet.id))!);
    expect(ownLoads).toBe(0);
    expect(view.revision).toBe(written);
    expect(view.lists.transactions.map((e) => e.txid).sort()).toEqual(txids.slice(1).sort());
    expect(view.lists.balances.confirmed).toBe(txids.slice(1).reduce((sum, _, k) => sum + 10_000n + BigInt(k + 1), 0n));
    // The sync brings the lists forward while the reads keep them, and no longer once they drop them.
    expect(sharedLists.has(wallet.id)).toBe(true);
    reads.forget(wallet.id);
    expect(sharedLists.has(wallet.id)).toBe(false);
    await sync.stop();
  });
});
