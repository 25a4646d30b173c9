/**
 * The Electrum server killed (kill -9, a real Fulcrum) while a wallet with many used addresses is being
 * discovered, then started again: while it is away the service is not ready, naming the Electrum server, and the
 * wallet's `scan` says how far it got and stays there; once it is back the wallet ends exactly as Bitcoin Core's
 * watch-only wallet shows it (transactions, coins, balance): nothing of the lost steps is half-written.
 *
 * The service reaches Fulcrum through a TCP relay in this test, which stops passing Fulcrum's answers on once the
 * wallet has been extended by enough addresses (each paid address watches one more): Fulcrum is killed while the
 * scan waits on it, whatever the speed of the machine.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { bearer, request, startTestServer, type TestServer } from '../../support/server.js';
import { Chain, Client, fixtureWallets, sats, waitFor } from '../bitcoind/chain-world.js';

/** Receive addresses paid, one block each: past the gap limit many times over, so discovery takes many steps. */
const PAID = 250;

/** Relays TCP to `port`; once `freezeAt` subscriptions went through, holds every answer back (connections stay open). */
async function startRelay(port: () => number, freezeAt: number): Promise<{ url: string; frozen: Promise<void>; dropAll(): void; close(): Promise<void> }> {
  let subscriptions = 0;
  let frozen = false;
  let thawed = false;
  let onFrozen!: () => void;
  const frozenPromise = new Promise<void>((resolve) => (onFrozen = resolve));
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port(), '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data: Buffer) => {
      subscriptions += data.toString('utf8').split('"blockchain.scripthash.subscribe"').length - 1;
      if (!frozen && !thawed && subscriptions >= freezeAt) {
        frozen = true;
        onFrozen();
      }
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (!frozen) client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    frozen: frozenPromise,
    dropAll: () => {
      frozen = false;
      thawed = true; // from now on a plain relay
      for (const socket of sockets) socket.destroy();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describeWithFulcrum('the Electrum server lost while a wallet is discovered', () => {
  let chain: Chain;
  let fulcrum: FulcrumServer;
  let server: TestServer;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let client: Client;
  let birthday: number;
  const wallet = fixtureWallets['w_wpkh']!;

  beforeAll(async () => {
    chain = await Chain.start({ args: FULCRUM_NODE_ARGS });
    birthday = (await chain.height()) + 1;
    const { descriptor } = await chain.rpc.call('getdescriptorinfo', [wallet.recv_descriptor]);
    const addresses: string[] = await chain.rpc.call('deriveaddresses', [descriptor, [0, PAID - 1]]);
    for (const [i, address] of addresses.entries()) {
      await chain.miner.call('sendtoaddress', [address, Number((0.001 + i / 1e6).toFixed(8))]);
      await chain.rpc.call('generatetodescriptor', [1, 'raw(51)']);
    }
    fulcrum = await startFulcrum(chain.node);
    // 40 scripts watched at first (a gap of 20 per branch), then one more per paid address: frozen about halfway.
    relay = await startRelay(() => fulcrum.port, 40 + PAID / 2);
    server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: relay.url, SERVICE_SYNC_INTERVAL: '0.2', SERVICE_LOG_LEVEL: 'error' } });
    client = await Client.forAdmin(server);
  }, 300_000);

  afterAll(async () => {
    await server?.dispose();
    await relay?.close();
    await fulcrum?.stop();
    await chain?.stop();
  });

  it('says where the wallet is while the server is away, and ends as Bitcoin Core shows it once it is back', async () => {
    const tip = await chain.height();
    await client.importWallet('many', { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday });
    await relay.frozen;
    await fulcrum.kill();
    relay.dropAll();
    const auth = { authorization: bearer(client.token) };
    try {
      const down = await waitFor(async () => {
        const answer = await request(`${server.api}/readiness`, { headers: auth });
        return answer.status === 503 && answer;
      }, 'readiness to fail while Fulcrum is away');
      expect(down.body.checks.chain).toBe('failing');
      expect(down.body.reasons.chain).toMatch(/Electrum server/);
      const away = await client.details('many');
      expect(away.txlist.length).toBeLessThan(PAID);
      expect(away.scan).not.toBeNull();
      expect(Object.keys(away.scan).sort()).toEqual(['height', 'progress']);
      expect(away.scan.height).toBeGreaterThanOrEqual(birthday);
      expect(away.scan.height).toBeLessThan(tip);
      expect(away.scan.progress).toBeGreaterThan(0);
      expect(away.scan.progress).toBeLessThan(1);
      // It stays where it got while the server is away.
      const again = await client.details('many');
      expect(again.scan.height).toBe(away.scan.height);
    } finally {
      await fulcrum.restart();
    }

    const watcher = await chain.watcher('many', wallet);
    await watcher.call('rescanblockchain', [birthday]);
    const coreTxs: string[] = (await watcher.call<any[]>('listtransactions', ['*', 10_000, 0, true])).map((t) => `${t.txid} ${t.blockheight}`).sort();
    expect(coreTxs).toHaveLength(PAID);
    const done = await waitFor(async () => {
      const details = await client.details('many');
      return details.scan === null && details;
    }, 'the wallet to reach the tip once Fulcrum is back', 120_000);
    expect(done.txlist.map((t: any) => `${t.txid} ${t.blockheight}`).sort()).toEqual(coreTxs);
    const coreCoins = (await watcher.call<any[]>('listunspent', [0, 9_999_999, [], true])).map((u) => `${u.txid}:${u.vout} ${sats(u.amount)}`).sort();
    expect(done.utxo.map((u: any) => `${u.txid}:${u.vout} ${u.amount_sat}`).sort()).toEqual(coreCoins);
    expect(done.balance.total_sat).toBe((await chain.coreBalance(watcher)).total);
    expect((await request(`${server.api}/readiness`, { headers: auth })).status).toBe(200);
  }, 240_000);
});
