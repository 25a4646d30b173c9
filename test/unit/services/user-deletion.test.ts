/**
 * Deleting a user who owns wallets (every store): refused by default with nothing changed; with a
 * transfer the wallets change owner and keep their shares and PSBTs; with deletion the wallets go with
 * their PSBTs, signatures and reservations. Shares the user had on other wallets go in every case.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PasswordHasher } from '../../../src/auth/passwords.js';
import { ServiceError } from '../../../src/services/errors.js';
import { UserService } from '../../../src/services/users.js';
import type { Store, StoredWallet, WalletShare } from '../../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../../support/stores.js';

function wallet(id: string, ownerName: string): StoredWallet {
  return {
    id,
    alias: id,
    name: id,
    description: '',
    ownerName,
    network: 'regtest',
    receiveDescriptor: `wpkh(${id}/0/*)`,
    changeDescriptor: `wpkh(${id}/1/*)`,
    addressType: 'bech32',
    sigsRequired: 1,
    sigsTotal: 1,
    keys: [],
    gapLimit: 20,
    birthday: 0,
    createdAt: 1,
    revision: 0,
    tip: null,
  };
}

const TXID = 'ab'.repeat(32);
const COIN = { txid: 'cd'.repeat(32), vout: 0 };

async function seed(store: Store): Promise<void> {
  for (const name of ['admin', 'alice', 'bob', 'carol']) {
    await store.users.insert({ name, passwordHash: 'not-a-hash', isAdmin: name === 'admin', createdAt: 1 });
  }
  const shares = (...s: WalletShare[]) => s;
  await store.wallets.insert(wallet('a-vault', 'alice'), shares({ userName: 'bob', access: 'spend' }, { userName: 'carol', access: 'read' }));
  await store.wallets.insert(wallet('a-hot', 'alice'), shares({ userName: 'carol', access: 'read' }));
  await store.wallets.insert(wallet('b-own', 'bob'), shares({ userName: 'alice', access: 'read' }));
  await store.transaction((repos) =>
    repos.psbts.insert(
      { walletId: 'a-vault', txid: TXID, psbt: 'cHNidP8B-with-signatures', changeOutputs: [], fullSize: 150, status: 'pending', createdAt: 1, updatedAt: 2, createdBy: 'bob' },
      [COIN],
    ),
  );
}

async function snapshot(store: Store) {
  const wallets = (await store.wallets.listAll()).sort((x, y) => x.alias.localeCompare(y.alias));
  return {
    users: (await store.users.list()).map((u) => u.name),
    wallets: await Promise.all(wallets.map(async (w) => ({ alias: w.alias, owner: w.ownerName, shares: (await store.wallets.shares(w.id)).sort((x, y) => x.userName.localeCompare(y.userName)) }))),
    psbts: (await store.psbts.list('a-vault')).map((p) => p.txid),
    reservations: (await store.psbts.reservations('a-vault')).map((r) => `${r.txid}:${r.vout}`),
  };
}

describe.each(STORE_KINDS)('deleting a user who owns wallets ($kind)', ({ open }) => {
  let opened: OpenedStore;
  let users: UserService;
  beforeEach(async () => {
    opened = await open();
    users = new UserService({ store: opened.store, hasher: new PasswordHasher(), passwordMinChars: 8, now: () => 5 });
    await seed(opened.store);
  });
  afterEach(() => opened.dispose());

  it('is refused by default, naming the wallets, and changes nothing', async () => {
    const before = await snapshot(opened.store);
    const refusal = await users.deleteUser('alice').catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ServiceError);
    expect(refusal).toMatchObject({ kind: 'conflict', code: 'user_owns_wallets' });
    expect((refusal as Error).message).toBe('User alice owns 2 wallets a-hot, a-vault: transfer them to another user or delete them with the user');
    expect(await snapshot(opened.store)).toEqual(before);
  });

  it('refuses a transfer to an unknown user or to the user deleted, changing nothing', async () => {
    const before = await snapshot(opened.store);
    await expect(users.deleteUser('alice', { wallets: { action: 'transfer', to: 'nobody' } })).rejects.toMatchObject({ code: 'user_not_found' });
    await expect(users.deleteUser('alice', { wallets: { action: 'transfer', to: 'alice' } })).rejects.toMatchObject({ code: 'invalid_transfer' });
    expect(await snapshot(opened.store)).toEqual(before);
  });

  it('transfers the wallets: shares and PSBTs stay, the new owner\'s own share goes, the user\'s shares elsewhere go', async () => {
    const result = await users.deleteUser('alice', { wallets: { action: 'transfer', to: 'bob' } });
    expect(result).toEqual({ name: 'alice', tokens: 0, sharesRemoved: 1, walletsDeleted: [], psbtsDeleted: 0, walletsTransferred: ['a-hot', 'a-vault'], transferredTo: 'bob', webhooks: 0 });
    expect(await snapshot(opened.store)).toEqual({
      users: ['admin', 'bob', 'carol'],
      wallets: [
        { alias: 'a-hot', owner: 'bob', shares: [{ userName: 'carol', access: 'read' }] },
        { alias: 'a-vault', owner: 'bob', shares: [{ userName: 'carol', access: 'read' }] },
        { alias: 'b-own', owner: 'bob', shares: [] },
      ],
      psbts: [TXID],
      reservations: [`${COIN.txid}:0`],
    });
  });

  it('deletes the wallets with their PSBTs, signatures and reservations', async () => {
    const result = await users.deleteUser('alice', { wallets: { action: 'delete' } });
    expect(result).toMatchObject({ walletsDeleted: ['a-hot', 'a-vault'], psbtsDeleted: 1, sharesRemoved: 1, walletsTransferred: [] });
    expect(await snapshot(opened.store)).toEqual({
      users: ['admin', 'bob', 'carol'],
      wallets: [{ alias: 'b-own', owner: 'bob', shares: [] }],
      psbts: [],
      reservations: [],
    });
  });

  it('deletes a user without wallets as before, with their shares of other wallets', async () => {
    expect(await users.deleteUser('carol')).toMatchObject({ name: 'carol', sharesRemoved: 2, walletsDeleted: [], walletsTransferred: [] });
    const after = await snapshot(opened.store);
    expect(after.users).toEqual(['admin', 'alice', 'bob']);
    expect(after.wallets.find((w) => w.alias === 'a-vault')?.shares).toEqual([{ userName: 'bob', access: 'spend' }]);
  });
});
