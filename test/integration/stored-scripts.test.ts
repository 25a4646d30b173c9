/**
 * A wallet's derived scripts are stored once (its address rows) and read back, not derived again: the stored
 * scripts equal what the descriptors derive, for every kind of wallet; after a restart the service answers with
 * the stored scripts (a row changed while it was stopped shows through); rows missing after a restart are derived
 * again and stored; a raised gap limit derives only the indexes not stored yet; a rescan derives them all again.
 * SQLite and PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { toHex } from '../../src/core/bytes.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { bearer, createToken, onStoppedServersDatabase, readinessOnceReady, request, startTestServer, type TestServer } from '../support/server.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { importFixtureWallets, nodeEnv, timeline, WALLET_IDS, walletDetails, wallets } from './wallet-helpers.js';

const derived = (descriptor: string, count: number): string[] =>
  new DescriptorDeriver(parseDescriptor(descriptor, NETWORKS.regtest)).deriveRange(0, count).map((o) => toHex(o.scriptPubKey));

describe.each(['sqlite', 'postgres'] as const)('stored scripts on %s', (database) => {
  let node: RpcTestServer | undefined;
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const server of servers.slice(1)) await server.stop();
    await servers[0]?.dispose();
    await node?.close();
  });

  it('stores each wallet kind\'s scripts as derived, reads them back after a restart, derives only what is missing', async () => {
    node = await startRpcTestServer({ snapshot: timeline.snapshots.length - 1 });
    const first = await startTestServer({ database, env: nodeEnv(node) });
    servers.push(first);
    const auth = { authorization: bearer((await createToken(first, 'admin', first.adminPassword, 'stored scripts')).jwt_token as string) };
    await importFixtureWallets({ server: first, auth }, WALLET_IDS);
    expect((await first.running.runtime.services.sync.runOnce()).ran).toBe(true);

    const store = first.running.runtime.store;
    const ids = new Map<string, string>();
    const counts = new Map<string, [number, number]>();
    for (const alias of WALLET_IDS) {
      const wallet = (await store.wallets.findByAlias(alias))!;
      ids.set(alias, wallet.id);
      const rows = (await store.wallets.chainRows(wallet.id))!;
      const branchCounts: [number, number] = [0, 0];
      for (const branch of [0, 1] as const) {
        const stored = rows.addresses.filter((a) => a.branch === branch).sort((a, b) => a.index - b.index);
        expect(stored.map((a) => a.index)).toEqual(stored.map((_, i) => i));
        expect(stored.length).toBeGreaterThanOrEqual(wallet.gapLimit);
        const descriptor = branch === 0 ? wallets[alias]!.recv_descriptor : wallets[alias]!.change_descriptor;
        expect(stored.map((a) => a.script), `${alias} branch ${branch}`).toEqual(derived(descriptor, stored.length));
        branchCounts[branch] = stored.length;
      }
      counts.set(alias, branchCounts);
    }
    const before = new Map<string, unknown>();
    for (const alias of WALLET_IDS) before.set(alias, (await walletDetails({ server: first, auth }, alias)).balance);
    await first.stop();

    // While stopped: the last receive row of w_wpkh holds another wallet's script (a row the service must read,
    // not derive), and w_wsh2of3's change rows past index 4 are gone, as if their write had never happened.
    const [wpkhReceive] = counts.get('w_wpkh')!;
    // A script no transaction pays: another wallet's, far past anything it watches.
    const foreign = toHex(new DescriptorDeriver(parseDescriptor(wallets.w_shwpkh!.recv_descriptor, NETWORKS.regtest)).deriveRange(1000, 1)[0]!.scriptPubKey);
    await onStoppedServersDatabase(first, [
      ['update wallet_addresses set script = ? where wallet_id = ? and branch = 0 and idx = ?', [foreign, ids.get('w_wpkh'), wpkhReceive - 1]],
      ['delete from wallet_addresses where wallet_id = ? and branch = 1 and idx >= 5', [ids.get('w_wsh2of3')]],
    ]);

    const second = await startTestServer({ database, dataFolder: first.dataFolder, postgresSchema: first.postgresSchema, env: { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '60' } });
    servers.push(second);
    expect(await readinessOnceReady(second)).toBe(200);
    const secondAuth = { authorization: bearer((await createToken(second, 'admin', second.adminPassword, 'stored scripts again')).jwt_token as string) };
    for (const alias of WALLET_IDS) expect((await walletDetails({ server: second, auth: secondAuth }, alias)).balance, alias).toEqual(before.get(alias));

    const addresses = async (alias: string, branch: 'receive' | 'change', from: number, count: number) => {
      const response = await request(`${second.api}/wallets/${alias}/addresses?branch=${branch}&from=${from}&count=${count}`, { headers: secondAuth });
      expect(response.status, response.text).toBe(200);
      return response.body.addresses.map((a: { address: string }) => a.address) as string[];
    };
    const foreignAddress = (await addresses('w_shwpkh', 'receive', 1000, 1))[0];
    expect(await addresses('w_wpkh', 'receive', wpkhReceive - 1, 1)).toEqual([foreignAddress]);

    // The missing rows were derived again and stored, equal to the derivation.
    const second2of3 = (await second.running.runtime.store.wallets.chainRows(ids.get('w_wsh2of3')!))!;
    const change = second2of3.addresses.filter((a) => a.branch === 1).sort((a, b) => a.index - b.index);
    expect(change.length).toBe(counts.get('w_wsh2of3')![1]);
    expect(change.map((a) => a.script)).toEqual(derived(wallets.w_wsh2of3!.change_descriptor, change.length));

    // A gap limit raised by 10: ten more rows, derived; the rows stored before stay as they were.
    const wpkh = (await second.running.runtime.store.wallets.findById(ids.get('w_wpkh')!))!;
    const raised = await request(`${second.api}/wallets/w_wpkh`, { method: 'PATCH', headers: secondAuth, json: { gap_limit: wpkh.gapLimit + 10 } });
    expect(raised.status, raised.text).toBe(200);
    expect((await second.running.runtime.services.sync.runOnce()).ran).toBe(true);
    const receive = (await second.running.runtime.store.wallets.chainRows(wpkh.id))!.addresses.filter((a) => a.branch === 0).sort((a, b) => a.index - b.index);
    expect(receive.length).toBe(wpkhReceive + 10);
    const expected = derived(wallets.w_wpkh!.recv_descriptor, wpkhReceive + 10);
    const derivedAll = [...expected];
    expected[wpkhReceive - 1] = foreign;
    expect(receive.map((a) => a.script)).toEqual(expected);

    // A rescan drops the rows: they are derived again, the changed one with them.
    const rescan = await request(`${second.api}/wallets/w_wpkh/rescan`, { method: 'POST', headers: secondAuth, json: { from: 0 } });
    expect(rescan.status, rescan.text).toBe(202);
    expect((await second.running.runtime.services.sync.runOnce()).ran).toBe(true);
    const rescanned = (await second.running.runtime.store.wallets.chainRows(wpkh.id))!.addresses.filter((a) => a.branch === 0).sort((a, b) => a.index - b.index);
    expect(rescanned.map((a) => a.script)).toEqual(derivedAll.slice(0, rescanned.length));
    expect(rescanned.length).toBeGreaterThanOrEqual(wpkhReceive + 10);
    expect((await walletDetails({ server: second, auth: secondAuth }, 'w_wpkh')).balance).toEqual(before.get('w_wpkh'));
  }, 180_000);

  it('answers a new wallet\'s creation with the addresses and balance its details show once the sync has loaded it', async () => {
    const server = servers[servers.length - 1]!;
    const auth = { authorization: bearer((await createToken(server, 'admin', server.adminPassword, 'new wallet')).jwt_token as string) };
    const fixture = wallets.w_wsh2of3!;
    const created = await request(`${server.api}/wallets`, {
      method: 'POST',
      headers: auth,
      json: { name: 'Fresh', alias: 'fresh', recv_descriptor: fixture.recv_descriptor, change_descriptor: fixture.change_descriptor, birthday: timeline.snapshots[timeline.snapshots.length - 1].tip.height + 1 },
    });
    expect(created.status, created.text).toBe(201);
    expect((await server.running.runtime.services.sync.runOnce()).ran).toBe(true);
    const details = await walletDetails({ server, auth }, 'fresh');
    expect(created.body.address).toBe(derivedAddress(fixture.recv_descriptor));
    const { scan: _createdScan, ...createdRest } = created.body;
    const { scan: _loadedScan, ...loadedRest } = details;
    expect(createdRest).toEqual(loadedRest);
  }, 60_000);
});

function derivedAddress(descriptor: string): string {
  return new DescriptorDeriver(parseDescriptor(descriptor, NETWORKS.regtest)).deriveRange(0, 1)[0]!.address;
}
