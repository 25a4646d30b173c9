/**
 * Reading several blocks at once: one JSON-RPC batch, or the node's REST interface when it serves one (read
 * in binary), with a logged fallback to JSON-RPC when REST is missing or answers something wrong.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { txid, type Block } from '../../../src/core/tx.js';
import { chainFailure } from '../../support/chain-error.js';
import { loadFixture } from '../../support/fixtures.js';
import { startRpcTestServer, type RpcTestServerOptions } from '../../support/rpc-server.js';

const timeline = loadFixture('timeline');
const snapshots = timeline.snapshots as Array<{ tip: { height: number; hash: string }; chain: string[] }>;
const last = snapshots.length - 1;
const chain = snapshots[last]!.chain;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function nodeAndSource(nodeOptions: RpcTestServerOptions) {
  const node = await startRpcTestServer({ snapshot: last, ...nodeOptions });
  const notices: string[] = [];
  const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`), retries: 0 });
  open.push(node, source);
  return { node, source, notices };
}

const summary = (block: Block) => ({ hash: block.hash, prevHash: block.prevHash, time: block.time, txids: block.transactions.map((tx) => txid(tx)) });

describe('reading several blocks', () => {
  it('without REST: one JSON-RPC batch, in the order asked, equal to reading them one by one; REST is not asked again', async () => {
    const { node, source, notices } = await nodeAndSource({ rest: false });
    const wanted = [chain[5]!, chain[2]!, chain[9]!, chain[2]!];
    const single = await Promise.all(wanted.map((hash) => source.getBlock(hash)));
    const before = node.count('getblock');
    const blocks = await source.getBlocks(wanted);
    expect(blocks.map(summary)).toEqual(single.map(summary));
    expect(node.count('getblock') - before).toBe(wanted.length);
    expect(notices).toEqual(['info: the node serves no REST interface (-rest); reading blocks over JSON-RPC']);
    const requests = node.httpRequests;
    await source.getBlocks([chain[1]!]);
    expect(node.httpRequests - requests).toBe(1); // the batch alone: no second look for REST
    expect(await source.getBlocks([])).toEqual([]);
  });

  it('with REST: binary reads, no getblock call, the same blocks', async () => {
    const { node, source, notices } = await nodeAndSource({ rest: true });
    const wanted = chain.slice(1, 12);
    const blocks = await source.getBlocks(wanted);
    expect(node.count('getblock')).toBe(0);
    expect(node.restRequests[0]).toBe('/rest/chaininfo.json');
    expect(node.restRequests.slice(1).sort()).toEqual(wanted.map((hash) => `/rest/block/${hash}.bin`).sort());
    const overRpc = await Promise.all(wanted.map((hash) => source.getBlock(hash)));
    expect(blocks.map(summary)).toEqual(overRpc.map(summary));
    expect(notices).toEqual(['info: reading blocks over the node\'s REST interface']);
  });

  it('a wrong REST answer (another block, garbage, an error) falls back to JSON-RPC, logged, and REST is tried again next time', async () => {
    const { node, source, notices } = await nodeAndSource({ rest: true });
    await source.getBlocks([chain[1]!]);
    const answers = [
      () => ({ status: 200, body: Buffer.from(loadFixture<Record<string, { hex: string }>>('blocks')[chain[3]!]!.hex, 'hex') }),
      () => ({ status: 200, body: Buffer.from('not a block') }),
      () => ({ status: 500, body: Buffer.from('Work queue depth exceeded') }),
    ];
    for (const answer of answers) {
      notices.length = 0;
      node.restBlockAnswer = (hash) => (hash === chain[7] ? answer() : undefined);
      const before = node.count('getblock');
      const blocks = await source.getBlocks([chain[6]!, chain[7]!]);
      expect(blocks.map((b) => b.hash)).toEqual([chain[6], chain[7]]);
      expect(node.count('getblock') - before).toBe(2);
      expect(notices).toEqual([expect.stringMatching(/^warn: reading blocks over REST failed; reading them over JSON-RPC/)]);
    }
    node.restBlockAnswer = undefined;
    const probes = node.restRequests.filter((path) => path === '/rest/chaininfo.json').length;
    const before = node.count('getblock');
    await source.getBlocks([chain[7]!]);
    expect(node.count('getblock')).toBe(before);
    expect(node.restRequests.filter((path) => path === '/rest/chaininfo.json').length).toBe(probes + 1);
  });

  it('an unknown block is not_found, with or without REST; a bad hash is refused before any request', async () => {
    for (const rest of [false, true]) {
      const { node, source } = await nodeAndSource({ rest });
      expect((await chainFailure(source.getBlocks([chain[1]!, '00'.repeat(32)]))).code).toBe('not_found');
      const requests = node.httpRequests;
      expect((await chainFailure(source.getBlocks([chain[1]!, 'xyz']))).code).toBe('invalid_argument');
      expect(node.httpRequests).toBe(requests);
    }
  });
});
