/** The chain status of the service details, read from the JSON-RPC test node through the Bitcoin Core source. */
import { afterEach, describe, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { CachedChainAccess } from '../../../src/services/sync/chain-access.js';
import { TestClock } from '../../support/clock.js';
import { startRpcTestServer, type RpcTestServer } from '../../support/rpc-server.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function accessWithClock(): Promise<{ node: RpcTestServer; access: CachedChainAccess; clock: TestClock }> {
  const node = await startRpcTestServer({ snapshot: 2 });
  const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', retries: 0 });
  open.push(node, source);
  const clock = new TestClock();
  return { node, access: new CachedChainAccess(source, clock.now, 2_000), clock };
}

describe('chain status of the service details', () => {
  it('answers many concurrent readers with one health check of the node', async () => {
    const { node, access } = await accessWithClock();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => access.status()));
    const tip = node.chain.snapshots[2]!.tip;
    for (const status of statuses) expect(status).toEqual({ backend: 'bitcoind', network: 'regtest', tip_height: tip.height, tip_hash: tip.hash, sync_state: 'unknown' });
    expect(node.calls.filter((c) => c.method === 'getblockchaininfo')).toHaveLength(1);
  });

  it('checks the node again once the last report is older than the maximum age', async () => {
    const { node, access, clock } = await accessWithClock();
    await access.status();
    node.behaviour.warmingUp = 'Loading block index…';
    clock.advance(1_999);
    expect((await access.status()).tip_height).toBe(node.chain.snapshots[2]!.tip.height);
    clock.advance(1);
    expect(await access.status()).toEqual({ backend: 'bitcoind', network: null, tip_height: null, tip_hash: null, sync_state: 'unavailable: warming_up' });
    expect(node.calls.filter((c) => c.method === 'getblockchaininfo')).toHaveLength(2);
  });
});
