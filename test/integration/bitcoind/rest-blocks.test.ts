/**
 * Blocks read from a real Bitcoin Core: over REST when the node runs with -rest (binary), over JSON-RPC when it
 * does not; both give the same blocks, transaction for transaction, including segwit ones.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { toHex } from '../../../src/core/bytes.js';
import { serializeTransaction, txid, type Block } from '../../../src/core/tx.js';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { describeWithBitcoind } from './chain-world.js';

const bytesOf = (block: Block) => ({ hash: block.hash, prevHash: block.prevHash, time: block.time, txs: block.transactions.map((tx) => [txid(tx), toHex(serializeTransaction(tx))]) });

describeWithBitcoind('blocks over REST and over JSON-RPC', () => {
  let node: BitcoindNode;
  let hashes: string[];
  beforeAll(async () => {
    node = await startBitcoind({ args: ['-rest=1'] });
    await node.rpc.call('createwallet', { wallet_name: 'miner', load_on_startup: false });
    const miner = node.rpc.wallet('miner');
    const address = await miner.call('getnewaddress', ['', 'bech32']);
    await node.rpc.call('generatetoaddress', [101, address]);
    for (const type of ['bech32', 'p2sh-segwit', 'legacy', 'bech32m']) await miner.call('sendtoaddress', [await miner.call('getnewaddress', ['', type]), 1.5]);
    await node.rpc.call('generatetoaddress', [1, address]);
    const tip = await node.rpc.call('getblockcount');
    hashes = [];
    for (let h = tip - 4; h <= tip; h++) hashes.push(await node.rpc.call('getblockhash', [h]));
  }, 120_000);
  afterAll(async () => {
    await node?.stop();
  });

  const source = (notices: string[]) => {
    const s = new BitcoindChainSource({ url: node.url, cookieFile: node.cookieFile, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`) });
    return s;
  };

  it('the node with -rest: blocks read over REST equal those read over JSON-RPC', async () => {
    const notices: string[] = [];
    const s = source(notices);
    try {
      const overRest = await s.getBlocks(hashes);
      const overRpc = await Promise.all(hashes.map((hash) => s.getBlock(hash)));
      expect(overRest.map(bytesOf)).toEqual(overRpc.map(bytesOf));
      expect(overRest.at(-1)!.transactions.length).toBe(5); // the coinbase and the four payments
      expect(notices).toEqual(['info: reading blocks over the node\'s REST interface']);
    } finally {
      await s.close();
    }
  });

  it('a node without -rest: read over JSON-RPC, said once', async () => {
    const plain = await startBitcoind();
    const notices: string[] = [];
    const s = new BitcoindChainSource({ url: plain.url, cookieFile: plain.cookieFile, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`) });
    try {
      const wanted: string[] = await plain.rpc.call('generatetoaddress', [3, 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080']);
      const blocks = await s.getBlocks(wanted);
      expect(blocks.map((b) => b.hash)).toEqual(wanted);
      await s.getBlocks(wanted);
      expect(notices).toEqual(['info: the node serves no REST interface (-rest); reading blocks over JSON-RPC']);
    } finally {
      await s.close();
      await plain.stop();
    }
  });
});
