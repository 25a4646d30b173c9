/** The label repository (BIP329 import and export) behaves the same on SQLite and PostgreSQL. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, StoredWallet } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const HASH = (c: string) => c.repeat(64);

const wallet: StoredWallet = {
  id: 'w-1',
  alias: 'hot',
  name: 'Hot',
  description: '',
  ownerName: 'alice',
  network: 'regtest',
  receiveDescriptor: 'wpkh(tpub/0/*)#aaaaaaaa',
  changeDescriptor: 'wpkh(tpub/1/*)#bbbbbbbb',
  addressType: 'bech32',
  sigsRequired: 1,
  sigsTotal: 1,
  keys: [{ fingerprint: '654cf308', derivation: 'm/84h/1h/0h', xpub: 'tpubX', label: 'laptop', labelUpdatedAt: 5 }],
  gapLimit: 20,
  birthday: 100,
  createdAt: 1_700_000_000_000,
  revision: 0,
  tip: null,
};

describe.each(STORE_KINDS)('label store conformance: $kind', ({ open }) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    await store.users.insert({ name: 'alice', passwordHash: 'x', isAdmin: false, createdAt: 1 });
    await store.wallets.insert(wallet, []);
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('lists transaction, address and output labels with their times, in type and reference order', async () => {
    await store.labels.setTxLabel('w-1', HASH('b'), 'second', 20);
    await store.labels.setTxLabel('w-1', HASH('a'), 'first', 10);
    await store.wallets.setAddressLabels('w-1', [{ address: 'bcrt1qexample', label: 'rent' }], 30);
    await store.wallets.setUtxoFlag('w-1', { txid: HASH('c'), vout: 2, frozen: true, label: '' }, 40);
    await store.wallets.setUtxoFlag('w-1', { txid: HASH('c'), vout: 1, frozen: false, label: 'change' }, 50);
    expect(await store.labels.list('w-1')).toEqual([
      { type: 'tx', ref: HASH('a'), label: 'first', updatedAt: 10 },
      { type: 'tx', ref: HASH('b'), label: 'second', updatedAt: 20 },
      { type: 'addr', ref: 'bcrt1qexample', label: 'rent', updatedAt: 30 },
      { type: 'output', ref: `${HASH('c')}:1`, label: 'change', frozen: false, updatedAt: 50 },
      { type: 'output', ref: `${HASH('c')}:2`, label: '', frozen: true, updatedAt: 40 },
    ]);
    await store.labels.setTxLabel('w-1', HASH('a'), '', 60);
    expect((await store.labels.list('w-1')).filter((l) => l.type === 'tx').map((l) => l.ref)).toEqual([HASH('b')]);
    expect(await store.labels.txLabels('w-1')).toEqual(new Map([[HASH('b'), 'second']]));
    // The key label's time is kept with the keys.
    expect((await store.wallets.findById('w-1'))?.keys[0]?.labelUpdatedAt).toBe(5);
  });

  it('locks an existing wallet inside a transaction, and removes transaction labels with the wallet', async () => {
    expect(await store.transaction((repos) => repos.labels.lock('w-1'))).toBe(true);
    expect(await store.transaction((repos) => repos.labels.lock('nope'))).toBe(false);
    expect((await store.wallets.findById('w-1'))?.revision).toBe(0);
    await store.labels.setTxLabel('w-1', HASH('a'), 'first', 10);
    await store.transaction((repos) => repos.wallets.delete('w-1'));
    expect(await store.labels.list('w-1')).toEqual([]);
  });
});
