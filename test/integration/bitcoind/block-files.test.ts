/**
 * A real Bitcoin Core without the block filter index, whose blocks folder the service may read: blocks come from
 * the node's own files (obfuscated with its `xor.dat`), equal to what the node sends, and a wallet scanned over
 * HTTP that way holds exactly the coins Core finds.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BlockFileReader } from '../../../src/chain/bitcoind/block-files.js';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { toHex } from '../../../src/core/bytes.js';
import { serializeTransaction, txid, type Block } from '../../../src/core/tx.js';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { bearer, createToken, request, startTestServer } from '../../support/server.js';
import { describeWithBitcoind, fixtureWallets, sats, serviceEnv, stripChecksum, waitFor } from './chain-world.js';

const bytesOf = (block: Block) => ({ hash: block.hash, prevHash: block.prevHash, time: block.time, txs: block.transactions.map((tx) => [txid(tx), toHex(serializeTransaction(tx))]) });
const wallet = fixtureWallets.w_wpkh!;

describeWithBitcoind('blocks read from the node\'s block files', () => {
  let node: BitcoindNode;
  let blocksFolder: string;
  let miner: ReturnType<BitcoindNode['rpc']['wallet']>;
  let minerAddress: string;

  const addresses = async (descriptor: string, count: number): Promise<string[]> => {
    const { descriptor: withChecksum } = await node.rpc.call('getdescriptorinfo', [stripChecksum(descriptor)]);
    return node.rpc.call('deriveaddresses', [withChecksum, [0, count - 1]]);
  };

  beforeAll(async () => {
    node = await startBitcoind({ args: ['-blockfilterindex=0'] });
    blocksFolder = join(node.datadir, 'regtest', 'blocks');
    await node.rpc.call('createwallet', { wallet_name: 'miner', load_on_startup: false });
    miner = node.rpc.wallet('miner');
    minerAddress = await miner.call('getnewaddress', ['', 'bech32']);
    await node.rpc.call('generatetoaddress', [101, minerAddress]);
    // Transactions of every kind, payments to the wallet among them, over several blocks.
    for (const type of ['bech32', 'p2sh-segwit', 'legacy', 'bech32m']) await miner.call('sendtoaddress', [await miner.call('getnewaddress', ['', type]), 1.5]);
    const [receive, change] = [await addresses(wallet.recv_descriptor, 3), await addresses(wallet.change_descriptor, 1)];
    await node.rpc.call('generatetoaddress', [1, minerAddress]);
    for (const [i, address] of [...receive, ...change].entries()) {
      await miner.call('sendtoaddress', [address, [0.11, 0.12, 0.13, 0.14][i]]);
      await node.rpc.call('generatetoaddress', [1, minerAddress]);
    }
    // A block replaced by another at the same height: the stale one stays in the files.
    const stale: string = await node.rpc.call('getbestblockhash');
    await node.rpc.call('invalidateblock', [stale]);
    await node.rpc.call('generateblock', [minerAddress, []]); // without the payment, which the next block holds
    await node.rpc.call('generatetoaddress', [1, minerAddress]);
  }, 120_000);
  afterAll(async () => {
    await node?.stop();
  });

  it('the node keeps no filters, so the blocks a scan reads come from its files, equal to the node\'s answers', async () => {
    const info = await node.rpc.call('getindexinfo');
    expect(info['basic block filter index']).toBeUndefined();
    const notices: string[] = [];
    const source = new BitcoindChainSource({ url: node.url, cookieFile: node.cookieFile, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`), blocksFolder });
    try {
      const tip: number = await node.rpc.call('getblockcount');
      const summaries = await source.getBlockSummaries(0, tip);
      expect(summaries.length).toBe(tip + 1);
      expect(summaries.every((s) => s.filter === null)).toBe(true);
      const hashes = summaries.map((s) => s.hash);
      const fromFiles = await source.getBlocks(hashes);
      expect(notices).toEqual(['info: reading blocks from the node\'s block files']);
      const fromNode = await Promise.all(hashes.map((hash) => source.getBlock(hash)));
      expect(fromFiles.map(bytesOf)).toEqual(fromNode.map(bytesOf));
      expect(fromFiles.slice(101).reduce((n, b) => n + b.transactions.length, 0)).toBe(1 + 4 + 4 + 4 + 2);
    } finally {
      await source.close();
    }
  });

  it('a wallet scanned over HTTP from the files (the folder beside the cookie) holds the coins Core finds, and follows the next block', async () => {
    // No blocks folder set: the one beside the node's cookie is taken.
    const server = await startTestServer({ env: serviceEnv(node) });
    try {
      const auth = { authorization: bearer((await createToken(server, 'admin', server.adminPassword, 'block files')).jwt_token) };
      const created = await request(`${server.api}/wallets`, {
        method: 'POST',
        headers: auth,
        json: { name: 'From files', alias: 'files', recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: 0 },
      });
      expect(created.status, created.text).toBe(201);
      expect((await request(`${server.api}/service`, { headers: auth })).body.config.bitcoind_blocks_folder).toBe(blocksFolder);
      const coreCoins = async () => {
        const scan = await node.rpc.call('scantxoutset', ['start', [{ desc: wallet.recv_descriptor, range: 20 }, { desc: wallet.change_descriptor, range: 20 }]]);
        return scan.unspents.map((u: any) => `${u.txid}:${u.vout}:${sats(u.amount)}`).sort();
      };
      const serviceCoins = async () => {
        const details = await request(`${server.api}/wallets/files`, { headers: auth });
        return details.body.scan === null ? details.body.utxo.map((u: any) => `${u.txid}:${u.vout}:${u.amount_sat}`).sort() : undefined;
      };
      const expected = await coreCoins();
      expect(expected.length).toBe(4);
      await waitFor(async () => JSON.stringify(await serviceCoins()) === JSON.stringify(expected), 'the scan to find Core\'s coins');

      const [next] = (await addresses(wallet.recv_descriptor, 4)).slice(3);
      await miner.call('sendtoaddress', [next, 0.25]);
      await node.rpc.call('generatetoaddress', [1, minerAddress]);
      const afterBlock = await coreCoins();
      expect(afterBlock.length).toBe(5);
      await waitFor(async () => JSON.stringify(await serviceCoins()) === JSON.stringify(afterBlock), 'the next block\'s coin');
      expect(server.logs.some((line) => line.includes('reading blocks from the node\'s block files'))).toBe(true);
      expect(server.logs.some((line) => /"level":(40|50)/.test(line))).toBe(false);
    } finally {
      await server.dispose();
    }
  });

  it('a node whose blocks span many files (-fastprune): reading starts near the blocks asked for, by the node\'s heights', async () => {
    const small = await startBitcoind({ args: ['-blockfilterindex=0', '-fastprune'] });
    const source = new BitcoindChainSource({ url: small.url, cookieFile: small.cookieFile, network: 'regtest' });
    const starts: unknown[] = [];
    const folder = join(small.datadir, 'regtest', 'blocks');
    const reader = new BlockFileReader({
      folder,
      network: 'regtest',
      outOfOrder: 4,
      heightsOf: (hashes) => source.blockHeights(hashes),
      log: (level, message, details) => starts.push(...(message.includes('from a later file') ? [details] : [])),
    });
    try {
      await small.rpc.call('createwallet', { wallet_name: 'miner', load_on_startup: false });
      const smallMiner = small.rpc.wallet('miner');
      const address = await smallMiner.call('getnewaddress', ['', 'bech32']);
      await small.rpc.call('generatetoaddress', [101, address]);
      // Blocks of about 15 KB: files of 64 KiB hold four or five each.
      const payees = await small.rpc.call('deriveaddresses', [(await small.rpc.call('getdescriptorinfo', [stripChecksum(wallet.recv_descriptor)])).descriptor, [0, 499]]);
      for (let i = 0; i < 16; i++) {
        await smallMiner.call('sendmany', ['', Object.fromEntries(payees.map((payee: string) => [payee, 0.0001]))]);
        await small.rpc.call('generatetoaddress', [1, address]);
      }
      const files = readdirSync(folder).filter((name) => /^blk\d+\.dat$/.test(name));
      expect(files.length).toBeGreaterThanOrEqual(4);

      const tip: number = await small.rpc.call('getblockcount');
      const hashesAt = (heights: number[]) => Promise.all(heights.map((height) => source.getBlockHash(height)));
      expect(await source.blockHeights(await hashesAt([0, 50, tip]))).toEqual([0, 50, tip]);
      expect(await source.blockHeights(['00'.repeat(32)])).toEqual([undefined]);
      for (const heights of [[tip - 2, tip - 1, tip], [1, 2, 3], [tip - 5, tip - 4]]) {
        const hashes = await hashesAt(heights);
        const blocks = await reader.getBlocks(hashes);
        expect(blocks.map((b) => b && bytesOf(b))).toEqual((await Promise.all(hashes.map((hash) => source.getBlock(hash)))).map(bytesOf));
      }
      // The first read started near the tip; the old blocks were found from the first file, and the blocks after
      // them by reading on from there.
      expect(starts).toEqual([expect.objectContaining({ folder })]);
      expect((starts[0] as { file: number }).file).toBeGreaterThanOrEqual(files.length - 3);
    } finally {
      await reader.close();
      await source.close();
      await small.stop();
    }
  });
});
