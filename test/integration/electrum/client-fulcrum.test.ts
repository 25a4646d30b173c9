/**
 * The Electrum client against a real Fulcrum over a real Bitcoin Core (regtest): negotiation, a batch of block
 * headers checked against the node's, a server error kept, and a restart of Fulcrum survived.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ElectrumClient } from '../../../src/chain/electrum/client.js';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { chainFailure } from '../../support/chain-error.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { FULCRUM_NODE_ARGS, headerHash, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';

const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';
const BLOCKS = 450;

describeWithFulcrum('Electrum client against Fulcrum', () => {
  let node: BitcoindNode;
  let fulcrum: FulcrumServer;
  let client: ElectrumClient;
  beforeAll(async () => {
    node = await startBitcoind({ args: FULCRUM_NODE_ARGS });
    const address = await node.rpc.call<string>('getnewaddress', []).catch(async () => {
      await node.rpc.call('createwallet', ['miner']);
      return node.rpc.call<string>('getnewaddress', []);
    });
    await node.rpc.call('generatetoaddress', [BLOCKS, address]);
    fulcrum = await startFulcrum(node);
    client = new ElectrumClient({ url: fulcrum.url, timeoutMs: 10_000 });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await fulcrum?.stop();
    await node?.stop();
  });

  it('negotiates protocol 1.4 to 1.6 and reads the regtest genesis hash', async () => {
    const info = await client.connect();
    expect(info.software).toMatch(/^Fulcrum \d+\.\d+/);
    expect(['1.4', '1.4.1', '1.4.2', '1.4.3', '1.4.4', '1.4.5', '1.5', '1.5.0', '1.6', '1.6.0']).toContain(info.protocol);
    expect(info.genesisHash).toBe(REGTEST_GENESIS);
    expect(client.connected).toBe(true);
  });

  it('reads every block header in one paged batch, each matching the node', async () => {
    const calls = Array.from({ length: BLOCKS + 1 }, (_, height) => ({ method: 'blockchain.block.header', params: [height] }));
    const headers = await client.batch<string>(calls);
    expect(headers).toHaveLength(BLOCKS + 1);
    expect(headerHash(headers[0]!)).toBe(REGTEST_GENESIS);
    for (const height of [1, 299, 300, 301, BLOCKS]) {
      expect(headerHash(headers[height]!)).toBe(await node.rpc.call<string>('getblockhash', [height]));
    }
    const outcomes = await client.batchSettled([
      { method: 'blockchain.block.header', params: [1] },
      { method: 'blockchain.block.header', params: [BLOCKS + 1000] },
    ]);
    expect(outcomes[0]).toEqual({ ok: true, result: headers[1] });
    expect(outcomes[1]!.ok).toBe(false);
  });

  it("keeps Fulcrum's error for an unknown transaction", async () => {
    const error = await chainFailure(client.request('blockchain.transaction.get', ['00'.repeat(32)]));
    expect(error.code).toBe('rpc_error');
    expect(error.reason).toBeTruthy();
    expect(typeof error.rpcCode).toBe('number');
  });

  it('comes back after Fulcrum is killed and restarted, and tells its listeners', async () => {
    let reconnects = 0;
    const unsubscribe = client.onReconnect(() => reconnects++);
    await fulcrum.kill();
    expect((await chainFailure(client.request('server.ping', []))).code).toMatch(/^(unreachable|connection_refused)$/);
    await fulcrum.restart();
    while (reconnects === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    unsubscribe();
    const tip = await client.request<{ height: number; hex: string }>('blockchain.headers.subscribe', []);
    expect(tip.height).toBe(BLOCKS);
    expect(headerHash(tip.hex)).toBe(await node.rpc.call<string>('getbestblockhash'));
  });
});
