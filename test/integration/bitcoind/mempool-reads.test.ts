/**
 * The sync's mempool reads against a real Bitcoin Core, through a proxy that records every JSON-RPC call: each
 * transaction is fetched once however many passes list it, a pass with nothing new fetches nothing, a replaced
 * or mined transaction leaves what the source lists, and one a reorg returns to the mempool is listed again; a
 * block found while the sync reads the mempool does not make the wallet's unconfirmed payment look replaced.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { bearer, startTestServer, type TestServer } from '../../support/server.js';
import { readStream } from '../webhook-helpers.js';
import { startRpcCountingProxy, type RpcCountingProxy } from '../../support/rpc-counting-proxy.js';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv, waitFor } from './chain-world.js';

const ID = 'w_wpkh';

/** The txids asked for with getrawtransaction among `calls`, each as many times as asked. */
const fetchedTxids = (proxy: RpcCountingProxy, since = 0): string[] =>
  proxy.calls.slice(since).filter((c) => c.method === 'getrawtransaction').map((c) => String(c.params[0]));

describeWithBitcoind('mempool reads fetch only the transactions new since the last read', () => {
  let chain: Chain;
  const proxies: RpcCountingProxy[] = [];
  let server: TestServer | undefined;
  const sources: BitcoindChainSource[] = [];

  beforeAll(async () => {
    chain = await Chain.start();
  }, 60_000);

  afterAll(async () => {
    await server?.dispose();
    for (const source of sources) await source.close();
    for (const proxy of proxies) await proxy.close();
    await chain?.stop();
  });

  it('the sync fetches each mempool transaction once over many passes, and the wallet shows its payment', async () => {
    const proxy = await startRpcCountingProxy(chain.node.url);
    proxies.push(proxy);
    server = await startTestServer({ env: { ...serviceEnv(chain.node), SERVICE_BITCOIND_URL: proxy.url, SERVICE_LOG_LEVEL: 'warn' } });
    const client = await Client.forAdmin(server);
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });

    const others: string[] = [];
    for (let i = 0; i < 6; i++) others.push(await chain.pay([{ address: await chain.minerAddressOf('bech32'), sat: 100_000 + i }]));
    await waitFor(async () => others.every((txid) => fetchedTxids(proxy).includes(txid)), 'the sync to fetch the six payments');
    const passes = () => proxy.of('getrawmempool').length;
    const listedBefore = passes();
    await waitFor(async () => passes() >= listedBefore + 3, 'three more mempool passes');

    const payment = await chain.pay([{ address: await client.nextAddress(ID), sat: 250_000 }]);
    await client.waitForTransaction(ID, payment, (n) => n === 0, 'the payment, unconfirmed');
    const listedAfter = passes();
    await waitFor(async () => passes() >= listedAfter + 3, 'three more mempool passes');

    const fetched = fetchedTxids(proxy);
    for (const txid of [...others, payment]) expect(fetched.filter((t) => t === txid), `getrawtransaction of ${txid}`).toHaveLength(1);
    expect(fetched, 'nothing but the mempool transactions fetched').toHaveLength(others.length + 1);
    expect((await client.details(ID)).txlist.map((t: any) => t.txid)).toContain(payment);
  }, 90_000);

  it('a block found just before the sync reads the mempool: the payment it confirms is not taken for replaced', async () => {
    const proxy = await startRpcCountingProxy(chain.node.url);
    proxies.push(proxy);
    const raced = await startTestServer({ env: { ...serviceEnv(chain.node, '60'), SERVICE_BITCOIND_URL: proxy.url, SERVICE_LOG_LEVEL: 'warn' } });
    try {
      const client = await Client.forAdmin(raced);
      const wallet = fixtureWallets[ID]!;
      await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
      await waitFor(async () => (await client.details(ID)).scan === null, 'the wallet at the tip');
      const payment = await chain.pay([{ address: await client.nextAddress(ID), sat: 350_000 }]);
      await client.waitForTransaction(ID, payment, (n) => n === 0, 'the payment, unconfirmed');
      // Every unconfirmed transaction of the wallet (this payment, and the first test's) confirms in the block.
      const pending: string[] = (await client.details(ID)).txlist.filter((t: any) => t.confirmations === 0).map((t: any) => t.txid);
      expect(pending).toContain(payment);
      const since = String(await raced.running.runtime.store.events.lastSeq());
      // The next mempool read reaches the node only once a block holds the payment: the sync read the tip
      // before that block, and the mempool it reads no longer has the payment.
      let mined: string | undefined;
      proxy.beforeForward = async (calls) => {
        if (mined !== undefined || !calls.some((c) => c.method === 'getrawmempool')) return;
        [mined] = await chain.mine(1);
      };
      // Another payment moves the mempool: its watch asks for the pass that reads it.
      await chain.pay([{ address: await chain.minerAddressOf('bech32'), sat: 100_000 }]);
      await client.waitForTransaction(ID, payment, (n) => n === 1, 'the payment in the block mined before the mempool read');
      expect(mined).toBeDefined();
      const { messages } = await readStream(`${raced.api}/events`, { authorization: bearer(client.token), 'last-event-id': since }, pending.length);
      expect(messages.map((m) => `${m.data.type} ${m.data.data.txid}`).sort()).toEqual(pending.map((txid) => `transaction.confirmed ${txid}`).sort());
    } finally {
      await raced.dispose();
    }
  }, 90_000);

  it('a read after a replacement fetches only the replacement, and the original is no longer listed; mined and returned by a reorg', async () => {
    const proxy = await startRpcCountingProxy(chain.node.url);
    proxies.push(proxy);
    const source = new BitcoindChainSource({ url: proxy.url, cookieFile: chain.node.cookieFile, network: 'regtest', retries: 0 });
    sources.push(source);
    const listed = async () => (await source.mempoolTransactions()).map((t) => t.txid).sort();
    const nodeMempool = async () => (await chain.rpc.call<string[]>('getrawmempool')).sort();

    const payments: string[] = [];
    for (let i = 0; i < 3; i++) payments.push(await chain.pay([{ address: await chain.minerAddressOf('bech32'), sat: 200_000 + i }]));
    expect(await listed()).toEqual(await nodeMempool());
    const firstRead = fetchedTxids(proxy);
    expect(firstRead.sort()).toEqual(await nodeMempool());

    let mark = proxy.calls.length;
    expect(await listed(), 'a read with nothing new').toEqual(await nodeMempool());
    expect(fetchedTxids(proxy, mark), 'fetched by a read with nothing new').toEqual([]);

    const added = await chain.pay([{ address: await chain.minerAddressOf('bech32'), sat: 300_000 }]);
    const replaced = payments[2]!;
    const { txid: replacement } = await chain.miner.call<{ txid: string }>('bumpfee', [replaced]);
    mark = proxy.calls.length;
    const afterReplacement = await listed();
    expect(afterReplacement).toEqual(await nodeMempool());
    expect(afterReplacement).not.toContain(replaced);
    expect(afterReplacement).toEqual(expect.arrayContaining([added, replacement]));
    expect(fetchedTxids(proxy, mark).sort(), 'fetched after the replacement').toEqual([added, replacement].sort());

    const [block] = await chain.mine(1);
    mark = proxy.calls.length;
    expect(await listed(), 'after the block').toEqual([]);
    expect(fetchedTxids(proxy, mark)).toEqual([]);

    await chain.rpc.call('invalidateblock', [block]);
    const returned = await nodeMempool();
    expect(returned.length, 'transactions the reorg returned to the mempool').toBeGreaterThan(0);
    expect(await listed(), 'after the reorg').toEqual(returned);
    for (const t of await source.mempoolTransactions()) expect(t.tx.txid()).toBe(t.txid);
  }, 90_000);
});
