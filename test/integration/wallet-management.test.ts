/** Wallet CRUD over HTTP: creation forms, validation errors, duplicate aliases, ownership, sharing, service details. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createToken, request } from '../support/server.js';
import { startWalletWorld, timeline, wallets, type WalletWorld } from './wallet-helpers.js';

const MAINNET_XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';

let world: WalletWorld;
let bob: { authorization: string };
let carol: { authorization: string };

const post = (auth: { authorization: string }, json: unknown) => request(`${world.server.api}/wallets`, { method: 'POST', headers: auth, json });

beforeAll(async () => {
  world = await startWalletWorld({ snapshot: 5 });
  const users = world.server.running.runtime.services.users;
  await users.addUser('bob', 'bob-password-123', { admin: false });
  await users.addUser('carol', 'carol-password-123', { admin: false });
  bob = { authorization: bearer((await createToken(world.server, 'bob', 'bob-password-123', 'bob')).jwt_token) };
  carol = { authorization: bearer((await createToken(world.server, 'carol', 'carol-password-123', 'carol')).jwt_token) };
}, 60_000);
afterAll(() => world?.close());

describe('creating wallets', () => {
  it('creates from a receive/change pair with the default birthday at the tip and answers the details', async () => {
    const w = wallets.w_wpkh!;
    const response = await post(world.auth, { name: 'Savings account', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({
      alias: 'savings-account',
      name: 'Savings account',
      network: 'regtest',
      address_type: 'bech32',
      sigs_required: 1,
      sigs_total: 1,
      recv_descriptor: w.recv_descriptor,
      change_descriptor: w.change_descriptor,
      address_index: 0,
      change_index: 0,
      keys: [{ fingerprint: '654cf308', derivation: 'm/84h/1h/0h', label: '' }],
      balance: { confirmed: 0, confirmed_sat: 0, total_sat: 0 },
      utxo: [],
      txlist: [],
      pending_psbts: 0,
    });
    // The birthday is the tip at snapshot 5: one sync pass reaches it by connecting that one block.
    const pass = await world.server.running.runtime.services.sync.runOnce();
    expect(pass.blocksConnected).toBe(1);
    const details = await request(`${world.server.api}/wallets/savings-account`, { headers: world.auth });
    expect(details.body.scan).toBeNull();
  });

  it('creates a 2-of-3 from a policy with key labels, and derives a unique alias from a repeated name', async () => {
    const w = wallets.w_wsh2of3!;
    const policy = {
      type: 'wsh-sortedmulti',
      threshold: 2,
      keys: w.keys.map((k: any, i: number) => ({ key: `[${k.fingerprint}/${k.derivation.slice(2)}]${k.tpub}`, label: `signer ${i}` })),
    };
    const first = await post(world.auth, { name: 'Vault', policy, birthday: 0 });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ alias: 'vault', sigs_required: 2, sigs_total: 3, address_type: 'bech32' });
    expect(first.body.keys.map((k: any) => k.label)).toEqual(['signer 0', 'signer 1', 'signer 2']);
    const second = await post(world.auth, { name: 'Vault', policy, birthday: 0 });
    expect(second.status).toBe(201);
    expect(second.body.alias).toBe('vault-2');
  });

  it('finds the birthday height of a date from the node\'s block times', async () => {
    const w = wallets.w_tr!;
    const body = (alias: string, birthday: string) => ({ name: alias, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday });
    const old = await post(world.auth, body('dated-old', '2001-01-01'));
    expect(old.status, old.text).toBe(201);
    expect(old.body.scan).toEqual({ progress: 0, height: 0 });
    // A date after every block: the scan starts above the tip, so there is nothing to scan yet.
    const future = await post(world.auth, body('dated-future', '2099-01-01'));
    expect(future.body.scan).toBeNull();
    const pass = await world.server.running.runtime.services.sync.runOnce();
    expect(pass.blocksConnected).toBe(timeline.snapshots[5].tip.height + 1);
    for (const alias of ['dated-old', 'dated-future']) {
      expect((await request(`${world.server.api}/wallets/${alias}`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    }
  });

  it('refuses a duplicate alias with 409', async () => {
    const w = wallets.w_pkh!;
    const body = { name: 'Legacy', alias: 'legacy', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 };
    expect((await post(world.auth, body)).status).toBe(201);
    const again = await post(bob, body);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('wallet_exists');
  });

  it('answers 400 naming the problem for a bad descriptor, a bad checksum, a bad key and missing keys', async () => {
    const w = wallets.w_wpkh!;
    const badChecksum = w.recv_descriptor.replace(/#.*$/, '#aaaaaaaa');
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', descriptor: 'wpkh(nonsense)' }, '/descriptor'],
      [{ name: 'x', recv_descriptor: badChecksum, change_descriptor: w.change_descriptor }, '/recv_descriptor'],
      [{ name: 'x', policy: { type: 'wpkh', keys: [{ key: '[654cf308/84h/1h/0h]tpubNOTAKEY' }] } }, '/policy'],
      [{ name: 'x' }, ''],
      [{ name: 'x', descriptor: w.recv_descriptor, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor }, ''],
    ];
    for (const [body, path] of cases) {
      const response = await post(world.auth, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.errors[0].path).toBe(path);
      expect(response.body.message.length).toBeGreaterThan(10);
    }
    const checksum = await post(world.auth, cases[1]![0]);
    expect(checksum.body.code).toBe('invalid_checksum');
  });

  it('answers 422 for keys of another network and 400 for bad fields', async () => {
    const wrong = await post(world.auth, { name: 'main', descriptor: `wpkh(${MAINNET_XPUB}/<0;1>/*)` });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe('wrong_network');
    const w = wallets.w_wpkh!;
    const base = { recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor };
    for (const bad of [
      { ...base, name: '' },
      { ...base, name: 'a', alias: 'Has Spaces' },
      { ...base, name: 'a', gap_limit: 0 },
      { ...base, name: 'a', birthday: '2024-02-30' },
      { ...base, name: 'a', shared_with: [{ user: 'nobody', access: 'read' }] },
      { ...base, name: 'a', shared_with: [{ user: 'bob', access: 'all' }] },
    ]) {
      const response = await post(world.auth, bad);
      expect(response.status, JSON.stringify(bad)).toBe(400);
    }
  });
});

describe('ownership and sharing', () => {
  it('hides another user\'s wallet exactly like a missing one, and lists only accessible wallets', async () => {
    const hidden = await request(`${world.server.api}/wallets/legacy`, { headers: bob });
    const missing = await request(`${world.server.api}/wallets/no-such-wallet`, { headers: bob });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
    expect(hidden.body.code).toBe('wallet_not_found');
    expect((await request(`${world.server.api}/wallets`, { headers: bob })).body).toEqual({ wallets: [], total: 0 });
    const mine = await request(`${world.server.api}/wallets`, { headers: world.auth });
    expect(mine.body.wallets.map((w: any) => w.alias)).toEqual(['savings-account', 'vault', 'vault-2', 'legacy']);
  });

  it('shares read with bob and spend with carol; only the owner manages the wallet', async () => {
    const patch = await request(`${world.server.api}/wallets/legacy`, {
      method: 'PATCH',
      headers: world.auth,
      json: { name: 'Old coins', labels: [{ fingerprint: wallets.w_pkh!.keys[0].fingerprint, label: 'paper key' }], shared_with: [{ user: 'bob', access: 'read' }, { user: 'carol', access: 'spend' }] },
    });
    expect(patch.status, patch.text).toBe(200);
    expect(patch.body).toMatchObject({ name: 'Old coins', keys: [{ label: 'paper key' }] });

    const asBob = await request(`${world.server.api}/wallets/legacy`, { headers: bob });
    expect(asBob.status).toBe(200);
    expect((await request(`${world.server.api}/wallets`, { headers: bob })).body.wallets.map((w: any) => w.alias)).toEqual(['legacy']);
    const reader = world.server.running.runtime.services.wallets.access;
    const principal = (name: string) => ({ userName: name, isAdmin: false });
    await expect(reader.resolve(principal('bob'), 'legacy', 'read')).resolves.toMatchObject({ alias: 'legacy', ownerName: 'admin' });
    await expect(reader.resolve(principal('bob'), 'legacy', 'spend')).rejects.toMatchObject({ code: 'wallet_not_found' });
    await expect(reader.resolve(principal('carol'), 'legacy', 'spend')).resolves.toMatchObject({ alias: 'legacy' });
    await expect(reader.resolve(principal('carol'), 'legacy', 'owner')).rejects.toMatchObject({ code: 'wallet_not_found' });

    for (const auth of [bob, carol]) {
      expect((await request(`${world.server.api}/wallets/legacy`, { method: 'PATCH', headers: auth, json: { name: 'mine now' } })).status).toBe(404);
      expect((await request(`${world.server.api}/wallets/legacy`, { method: 'DELETE', headers: auth })).status).toBe(404);
    }
  });

  it('fills the wallet members of the service details', async () => {
    const details = await request(`${world.server.api}/service`, { headers: world.auth });
    expect(details.body).toMatchObject({
      wallets_names: ['Savings account', 'Vault', 'Vault', 'Old coins'],
      wallets_alias: ['savings-account', 'vault', 'vault-2', 'legacy'],
      alias_name: { 'savings-account': 'Savings account', vault: 'Vault', 'vault-2': 'Vault', legacy: 'Old coins' },
      chain: { backend: 'bitcoind', tip_height: timeline.snapshots[5].tip.height, tip_hash: timeline.snapshots[5].tip.hash },
    });
  });

  it('deletes a wallet for its owner; it is gone for everyone', async () => {
    expect((await request(`${world.server.api}/wallets/legacy`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    expect((await request(`${world.server.api}/wallets/legacy`, { headers: world.auth })).status).toBe(404);
    expect((await request(`${world.server.api}/wallets/legacy`, { headers: carol })).status).toBe(404);
    expect((await post(world.auth, { name: 'again', alias: 'legacy', recv_descriptor: wallets.w_pkh!.recv_descriptor, change_descriptor: wallets.w_pkh!.change_descriptor })).status).toBe(201);
  });
});
