/**
 * The follower contract on the Bitcoin Core follower, against the JSON-RPC test node replaying Core's recorded
 * regtest timeline: blocks connected in order (read only when their filter matches the watched scripts), a block
 * that left the chain disconnected before anything else, and the mempool listed whole, so that a replaced
 * transaction is no longer in it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import type { BlockConnected, BlockDisconnected, ChainFollower, FollowRequest } from '../../../src/chain/follower.js';
import { txid } from '../../../src/core/tx.js';
import { startRpcTestServer, type RpcTestServer } from '../../support/rpc-server.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function followerOn(snapshot: number): Promise<{ node: RpcTestServer; follower: ChainFollower }> {
  const node = await startRpcTestServer({ snapshot });
  const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', retries: 0 });
  open.push(node, source);
  return { node, follower: source.follower };
}

/** A group standing at `height` of the node's active chain, watching `scripts`. */
function standingAt(node: RpcTestServer, height: number, scripts: Uint8Array[], recorded = new Map<string, string>()): FollowRequest {
  return {
    watchers: ['w'],
    from: { height, hash: node.chain.hashAt(height)! },
    scripts: () => ({ key: String(scripts.length), derive: () => scripts }),
    recordedParent: async (hash) => recorded.get(hash),
  };
}

async function updates(follower: ChainFollower, request: FollowRequest, maxBlocks = 100): Promise<Array<BlockConnected | BlockDisconnected>> {
  const out: Array<BlockConnected | BlockDisconnected> = [];
  for await (const update of follower.follow(request, await follower.tip(), maxBlocks)) out.push(update);
  return out;
}

describe('the Bitcoin Core follower', () => {
  it('connects the next blocks in order, reading only those whose filter matches the watched scripts', async () => {
    const { node, follower } = await followerOn(6);
    const tip = node.chain.tipHeight;
    // Watch one output of the tip block (B1): that block is read, the one before it is not.
    const b1 = node.chain.block(node.chain.tipHash)!;
    const paid = b1.block.transactions[1]!;
    const seen = await updates(follower, standingAt(node, tip - 2, [paid.outputs[0]!.script]));
    expect(seen.map((u) => [u.type, u.height, u.hash, u.prevHash])).toEqual([
      ['block_connected', tip - 1, node.chain.hashAt(tip - 1), node.chain.hashAt(tip - 2)],
      ['block_connected', tip, node.chain.hashAt(tip), node.chain.hashAt(tip - 1)],
    ]);
    const [before, last] = seen as BlockConnected[];
    expect(before!.read).toBe(false);
    expect(before!.transactions).toEqual([]);
    expect(last!.read).toBe(true);
    expect(last!.transactions.map(txid)).toContain(txid(paid));
    // At most maxBlocks per call.
    expect((await updates(follower, standingAt(node, tip - 2, []), 1)).map((u) => u.height)).toEqual([tip - 1]);
  });

  it('a reorg: the block that left the chain is disconnected first, then the new chain is connected from its parent', async () => {
    const { node, follower } = await followerOn(6);
    const b1 = node.chain.tipHash;
    const height = node.chain.tipHeight;
    const parent = node.chain.hashAt(height - 1)!;
    node.setSnapshot(7); // B1 is stale; two blocks on its parent
    const standing = standingAt(node, height, []);
    const fromB1 = { ...standing, from: { height, hash: b1 } };
    expect(await updates(follower, fromB1)).toEqual([{ type: 'block_disconnected', height, hash: b1, prevHash: parent }]);
    // The parent as recorded when the block was applied is taken first (a source may no longer know a stale block).
    const recorded = { ...fromB1, recordedParent: async () => 'ab'.repeat(32) };
    expect((await updates(follower, recorded))[0]).toMatchObject({ type: 'block_disconnected', prevHash: 'ab'.repeat(32) });
    const replay = await updates(follower, standingAt(node, height - 1, []));
    expect(replay.map((u) => [u.type, u.height, u.hash])).toEqual([
      ['block_connected', height, node.chain.hashAt(height)],
      ['block_connected', height + 1, node.chain.hashAt(height + 1)],
    ]);
    expect(replay[0]!.hash).not.toBe(b1);
  });

  it('lists the whole mempool: a transaction replaced is no longer listed', async () => {
    const { node, follower } = await followerOn(8);
    const scripts = { key: '0', derive: () => [] };
    const first = await follower.mempool(scripts);
    expect(first.type).toBe('mempool');
    const original = [...node.chain.mempool.keys()];
    expect(first.transactions.map((t) => t.txid)).toEqual(original);
    node.setSnapshot(9); // a replacement, the original gone
    const second = await follower.mempool(scripts);
    expect(second.transactions.map((t) => t.txid)).toEqual([...node.chain.mempool.keys()]);
    expect(second.transactions.map((t) => t.txid)).not.toContain(original[0]);
    for (const t of second.transactions) expect(txid(t.tx)).toBe(t.txid);
  });
});
