/**
 * The service's states holding one wallet (the sync's and the reads', loaded through the service's one scripts
 * cache) share each stored transaction's hex, scripts, values and inputs, on a real SQLite file and PostgreSQL:
 * a state reads as one loaded alone, takes nothing from a copy that is not the stored one, and what the states
 * shared is freed once neither holds the wallet.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { parseTransaction, serializeTransaction } from '../../../src/core/tx.js';
import type { Store } from '../../../src/store/repositories.js';
import { hexOf } from '../../../src/engine/index.js';
import { walletLists, WalletScriptsCache, WalletStateCache, type WalletView } from '../../../src/services/wallet-state.js';
import { writePayments } from '../../integration/large-wallet.support.js';
import { storedFixtureWallet } from '../../support/fixtures.js';
import { STORE_KINDS, type OpenedStore } from '../../support/stores.js';

const PAYMENTS = 300;

setFlagsFromString('--expose-gc');
const collectGarbage: () => void = runInNewContext('gc');

const template = storedFixtureWallet('w_wpkh', { id: 'w-held', alias: 'held', name: 'Held' });

const heldTxs = (view: WalletView) => view.state.wallets.get(view.wallet.id)!.txs;
/** What a read shows of a view: its lists and balances (not how it finds a transaction's hex). */
const shown = (view: WalletView) => {
  const { transactions, unspent } = walletLists(view);
  return { transactions, unspent, balances: view.lists.balances, summary: view.summary };
};

describe.each(STORE_KINDS)('states of one wallet sharing its transactions ($kind)', ({ open }) => {
  let opened: OpenedStore;
  let store: Store;
  const stored = async () => (await store.wallets.findById(template.id))!;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    await store.users.insert({ name: 'alice', passwordHash: 'x', isAdmin: false, createdAt: 1 });
    await store.wallets.insert(template, []);
    await writePayments(store, template.alias, PAYMENTS);
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('a second state shares each transaction\'s inputs with the first, and reads as a state loaded alone', async () => {
    const scripts = new WalletScriptsCache();
    const wallet = await stored();
    const first = await new WalletStateCache(store, scripts).view(wallet);
    const second = await new WalletStateCache(store, scripts).view(wallet);
    const alone = await new WalletStateCache(store, new WalletScriptsCache()).view(wallet);
    expect(heldTxs(second).size).toBe(PAYMENTS);
    for (const [txid, held] of heldTxs(first)) {
      expect(heldTxs(second).get(txid)!.tx.inputs).toBe(held.tx.inputs);
      expect(heldTxs(alone).get(txid)!.tx.inputs).not.toBe(held.tx.inputs);
    }
    expect(shown(second)).toEqual(shown(alone));
    expect(shown(first)).toEqual(shown(alone));
    expect(walletLists(second).transactions.map(hexOf)).toEqual(walletLists(alone).transactions.map(hexOf));
  });

  it('takes nothing from a state whose copy is not the stored one, and follows the store', async () => {
    const scripts = new WalletScriptsCache();
    const ahead = new WalletStateCache(store, scripts); // as the sync, holding a copy the store no longer has
    const before = await stored();
    const held = await ahead.view(before);
    // The store rewrites one transaction with another witness: the same txid, another hex.
    const rows = (await store.wallets.chainRows(template.id))!;
    const row = rows.transactions[7]!;
    const tx = parseTransaction(row.hex);
    const rewritten = { ...row, hex: toHex(serializeTransaction({ ...tx, inputs: tx.inputs.map((i) => ({ ...i, witness: [new Uint8Array(72).fill(1), new Uint8Array(33).fill(2)] })) })) };
    expect(rewritten.hex).not.toBe(row.hex);
    await store.transaction((repos) =>
      repos.wallets.applyChange({ walletId: template.id, addressesAdded: [], transactionsAdded: [], transactionsUpdated: [rewritten], transactionsRemoved: [], sync: rows.sync }, before.revision),
    );
    const after = await stored();
    const reads = await new WalletStateCache(store, scripts).view(after);
    expect(hexOf(heldTxs(held).get(row.txid)!)).toBe(row.hex); // the other state still holds its copy
    expect(hexOf(heldTxs(reads).get(row.txid)!)).toBe(rewritten.hex);
    expect(heldTxs(reads).get(row.txid)!.tx.inputs).not.toBe(heldTxs(held).get(row.txid)!.tx.inputs);
    expect(hexOf(walletLists(reads).transactions.find((e) => e.txid === row.txid)!)).toBe(rewritten.hex);
    const other = rows.transactions[8]!.txid;
    expect(heldTxs(reads).get(other)!.tx.inputs).toBe(heldTxs(held).get(other)!.tx.inputs);
    // The first state follows the store: its copy is now the stored one.
    const followed = await ahead.view(after);
    expect(hexOf(heldTxs(followed).get(row.txid)!)).toBe(rewritten.hex);
    expect(shown(reads)).toEqual(shown(await new WalletStateCache(store, new WalletScriptsCache()).view(after)));
  });

  it('frees what the states shared once neither holds the wallet', async () => {
    const scripts = new WalletScriptsCache();
    const sides = [new WalletStateCache(store, scripts), new WalletStateCache(store, scripts)];
    const wallet = await stored();
    const shared = await (async () => {
      const [a, b] = [await sides[0]!.view(wallet), await sides[1]!.view(wallet)];
      const [txid, held] = [...heldTxs(a)][0]!;
      expect(heldTxs(b).get(txid)!.tx.inputs).toBe(held.tx.inputs);
      return new WeakRef(held.tx.inputs);
    })();
    const settle = async () => {
      await new Promise((resolve) => setTimeout(resolve, 0)); // a WeakRef read in a job keeps its target to the job's end
      collectGarbage();
    };
    sides[0]!.forget(template.id);
    await settle();
    expect(shared.deref()).toBeDefined(); // the other state still holds it
    sides[1]!.forget(template.id);
    await settle();
    expect(shared.deref()).toBeUndefined();
  });
});
