/**
 * A wallet whose stored chain rows the engine refuses (here a gap in its address indexes, as a damaged store or a
 * hand edit leaves it) is left aside by the sync, logged once, and the service becomes ready and goes on following
 * the chain for every other wallet; a rescan rebuilds the wallet's rows and the sync follows it again. Before, every
 * sync pass failed on that one wallet and no wallet of the instance saw another block. SQLite and PostgreSQL, against
 * the recorded regtest node. Its reads answer 503 `wallet_rows_inconsistent` meanwhile; the wallet list (API and web)
 * still answers, marking it, and its web page offers the rescan.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, createToken, onStoppedServersDatabase, readinessOnceReady, request, startTestServer, type TestServer } from '../support/server.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { ensureWebAssets, WebClient } from '../support/web-client.js';
import { expectWalletMatchesCore, importFixtureWallets, nodeEnv, timeline, walletDetails } from './wallet-helpers.js';

const mempoolOf = (step: number) => new Set<string>(timeline.snapshots[step].mempool.map((m: { txid: string }) => m.txid));

describe.each(['sqlite', 'postgres'] as const)('a wallet with inconsistent stored rows on %s', (database) => {
  let node: RpcTestServer | undefined;
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.slice(1)) await server.stop();
    await servers[0]?.dispose();
    servers.length = 0;
    await node?.close();
  });

  it('is left aside while the others follow the chain, and followed again once rescanned', async () => {
    node = await startRpcTestServer({ snapshot: 3 });
    const first = await startTestServer({ database, env: nodeEnv(node) });
    servers.push(first);
    const auth = { authorization: bearer((await createToken(first, 'admin', first.adminPassword, 'aside')).jwt_token as string) };
    await importFixtureWallets({ server: first, auth }, ['w_wpkh', 'w_wsh2of3']);
    expect((await first.running.runtime.services.sync.runOnce()).ran).toBe(true);
    const broken = (await first.running.runtime.store.wallets.findByAlias('w_wpkh'))!;
    await first.stop();

    // While stopped: w_wpkh loses receive address 3, so its rows no longer run contiguously from index 0.
    await onStoppedServersDatabase(first, [['delete from wallet_addresses where wallet_id = ? and branch = 0 and idx = 3', [broken.id]]]);

    node.setSnapshot(4); // every wallet spent 0.3 BTC, confirmed: a block w_wsh2of3 must follow
    const second = await startTestServer({ database, dataFolder: first.dataFolder, postgresSchema: first.postgresSchema, env: { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '60' } });
    servers.push(second);
    expect(await readinessOnceReady(second)).toBe(200);
    const world = { server: second, auth: { authorization: bearer((await createToken(second, 'admin', second.adminPassword, 'aside again')).jwt_token as string) } };
    const sync = second.running.runtime.services.sync;
    expect((await sync.runOnce()).ran).toBe(true);
    expect((await sync.runOnce()).ran).toBe(true); // set aside once: a later pass neither fails nor says it again

    expectWalletMatchesCore(await walletDetails(world, 'w_wsh2of3'), timeline.snapshots[4].expected.w_wsh2of3, mempoolOf(4));
    const asideLines = second.logs.filter((line) => line.includes('the sync leaves a wallet aside'));
    expect(asideLines).toHaveLength(1);
    expect(JSON.parse(asideLines[0]!)).toMatchObject({ level: 40, wallet: broken.id, alias: 'w_wpkh' }) // pino's warn;
    // Its reads say what is wrong and the way out, nothing internal.
    const details = await request(`${second.api}/wallets/w_wpkh`, { headers: world.auth });
    expect(details.status).toBe(503);
    expect(details.body).toEqual({ code: 'wallet_rows_inconsistent', message: "This wallet's stored chain data is inconsistent; a rescan of the wallet rebuilds it" });
    // The wallet list still answers: the others with their balance, this one with why it has none.
    const listed = await request(`${second.api}/wallets`, { headers: world.auth });
    expect(listed.status, listed.text).toBe(200);
    const byAlias = new Map(listed.body.wallets.map((w: { alias: string }) => [w.alias, w]));
    expect(byAlias.get('w_wpkh')).toMatchObject({ balance: null, error: { code: 'wallet_rows_inconsistent', message: details.body.message } });
    expect((byAlias.get('w_wsh2of3') as { balance: unknown; error?: unknown }).balance).toMatchObject({ confirmed_sat: expect.any(Number) });
    expect(byAlias.get('w_wsh2of3')).not.toHaveProperty('error');
    // And so do the web pages: the list marks it, its page says why and offers the owner the rescan.
    ensureWebAssets();
    const web = new WebClient(second.url);
    expect((await web.signIn('admin', second.adminPassword)).status).toBe(303);
    const home = await web.get('/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('Stored data damaged: rescan');
    const walletPage = await web.get('/wallets/w_wpkh');
    expect(walletPage.status).toBe(503);
    expect(walletPage.text).toContain('data-wallet-error="wallet_rows_inconsistent"');
    expect(walletPage.text).toContain('action="/wallets/w_wpkh/rescan"');
    // Its sync row stays where the last consistent write left it: the sync did not follow it.
    const stored = (await second.running.runtime.store.wallets.findById(broken.id))!;
    expect(stored.tip?.hash).toBe(timeline.snapshots[3].tip.hash);

    const rescan = await request(`${second.api}/wallets/w_wpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: 0 } });
    expect(rescan.status, rescan.text).toBe(202);
    expect((await sync.runOnce()).ran).toBe(true);
    expectWalletMatchesCore(await walletDetails(world, 'w_wpkh'), timeline.snapshots[4].expected.w_wpkh, mempoolOf(4));
    expectWalletMatchesCore(await walletDetails(world, 'w_wsh2of3'), timeline.snapshots[4].expected.w_wsh2of3, mempoolOf(4));
  }, 120_000);
});
