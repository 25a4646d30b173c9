/**
 * Blocks read from block files laid out as Bitcoin Core writes them (records of message start, size and block,
 * then zeros set aside, the whole file XORed with the key in `xor.dat`), with the regtest blocks Core recorded.
 */
import { mkdirSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyXorKey, BlockFileReader } from '../../../src/chain/bitcoind/block-files.js';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { fromHex } from '../../../src/core/bytes.js';
import { parseBlock, txid, type Block } from '../../../src/core/tx.js';
import { blockRecords, blocksFolder, recordedBlocks, writeBlockFile, XOR_KEY } from '../../support/block-files.js';
import { loadFixture } from '../../support/fixtures.js';
import { startRpcTestServer } from '../../support/rpc-server.js';

const hashes = Object.entries(recordedBlocks)
  .sort((a, b) => a[1].height - b[1].height)
  .map(([hash]) => hash);

const folders: string[] = [];
const readers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (readers.length) await readers.pop()!.close();
  while (folders.length) rmSync(folders.pop()!, { recursive: true, force: true });
});

function folder(key: Uint8Array | null = XOR_KEY): string {
  const dir = blocksFolder(key);
  folders.push(dir);
  return dir;
}

function reader(dir: string, notices: string[] = []): BlockFileReader {
  const r = new BlockFileReader({ folder: dir, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`) });
  readers.push(r);
  return r;
}

/** A block as the node recorded it. */
const recorded = (hash: string) => parseBlock(fromHex(recordedBlocks[hash]!.hex));
const shape = (block: Block | undefined) => block && { hash: block.hash, prevHash: block.prevHash, txids: block.transactions.map((tx) => txid(tx)) };

describe('blocks from the node\'s block files', () => {
  it('finds blocks across files and out of order, each equal to the block the node recorded', async () => {
    const dir = folder();
    const firstHalf = hashes.slice(0, 6);
    const secondHalf = hashes.slice(6);
    // A node downloading blocks in parallel writes them out of height order.
    writeBlockFile(dir, 0, blockRecords([firstHalf[0]!, firstHalf[2]!, firstHalf[1]!, ...firstHalf.slice(3)]));
    writeBlockFile(dir, 1, blockRecords([...secondHalf].reverse()));
    const notices: string[] = [];
    const blocks = await reader(dir, notices).getBlocks(hashes);
    expect(blocks.map((b) => b?.hash)).toEqual(hashes);
    for (const block of blocks) {
      expect(block!.prevHash).toBe(recordedBlocks[block!.hash]!.prev ?? '0'.repeat(64));
      expect(block!.transactions.length).toBeGreaterThan(0);
    }
    expect(notices).toEqual(['info: reading blocks from the node\'s block files']);
  });

  it('holds no block file open once no read is waiting (a file the node prunes is not kept on its disk)', async () => {
    const dir = folder();
    writeBlockFile(dir, 0, blockRecords(hashes.slice(0, 6)));
    writeBlockFile(dir, 1, blockRecords(hashes.slice(6)));
    const openInFolder = () => readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
      } catch {
        return false;
      }
    });
    const r = reader(dir);
    const reads = [r.getBlocks(hashes.slice(0, 3)), r.getBlocks(hashes.slice(-3))];
    await reads[0];
    expect(openInFolder().length).toBeGreaterThan(0); // still reading: the files stay open between reads
    await reads[1];
    expect(openInFolder()).toEqual([]);
  });

  it('reads files without a key (nodes before Bitcoin Core 28)', async () => {
    const dir = folder(null);
    writeBlockFile(dir, 0, blockRecords(hashes), null);
    const blocks = await reader(dir).getBlocks([hashes[3]!, hashes[1]!]);
    expect(blocks.map((b) => b?.hash)).toEqual([hashes[3], hashes[1]]);
  });

  it('a block not in the files is left to the node; once the node appends it, it is found', async () => {
    const dir = folder();
    const written = hashes.slice(0, 4);
    writeBlockFile(dir, 0, blockRecords(written));
    const notices: string[] = [];
    const r = reader(dir, notices);
    const first = await r.getBlocks([hashes[2]!, hashes[4]!]);
    expect(first.map((b) => b?.hash)).toEqual([hashes[2], undefined]);
    // The node writes the next record where its last one ended, in the room it set aside.
    writeBlockFile(dir, 0, blockRecords([...written, hashes[4]!]));
    const second = await r.getBlocks([hashes[4]!, hashes[0]!]);
    expect(second.map((b) => b?.hash)).toEqual([hashes[4], hashes[0]]);
    expect(await r.getBlocks([hashes[5]!])).toEqual([undefined]);
  });

  it('files changed under it (a node that rebuilt its folder): never another block, and found again at their new places', async () => {
    const dir = folder();
    writeBlockFile(dir, 0, blockRecords(hashes));
    const r = reader(dir);
    expect((await r.getBlocks(hashes)).map(shape)).toEqual((await reader(dir).getBlocks(hashes)).map(shape));
    writeBlockFile(dir, 0, blockRecords([...hashes].reverse()));
    const afterChange = await r.getBlocks(hashes);
    afterChange.forEach((block, i) => expect(block === undefined || block.hash === hashes[i]).toBe(true));
    expect(afterChange.some((block) => block === undefined)).toBe(true);
    expect((await r.getBlocks(hashes)).map((b) => b?.hash)).toEqual(hashes);
  });

  it('a damaged block: looked for afresh once, then left to the node, its neighbours still read', async () => {
    const dir = folder();
    const plain = blockRecords(hashes.slice(0, 3));
    // The third block's transaction count made a count no block holds (0xff: an 8-byte count).
    const third = 8 + fromHex(recordedBlocks[hashes[0]!]!.hex).length + 8 + fromHex(recordedBlocks[hashes[1]!]!.hex).length + 8 + 80;
    plain[third] = 0xff;
    writeBlockFile(dir, 0, plain);
    const notices: string[] = [];
    const r = reader(dir, notices);
    for (let round = 0; round < 3; round++) {
      expect((await r.getBlocks(hashes.slice(0, 3))).map((b) => b?.hash)).toEqual([hashes[0], hashes[1], undefined]);
    }
    expect(notices.filter((n) => n.startsWith('warn'))).toEqual(['warn: a block was not where the node\'s block files had it; finding blocks in them again']);
  });

  it('another network\'s files: nothing found, said once, and nothing thrown', async () => {
    const dir = folder();
    writeBlockFile(dir, 0, blockRecords(hashes));
    const notices: string[] = [];
    const r = new BlockFileReader({ folder: dir, network: 'mainnet', log: (level, message) => notices.push(`${level}: ${message}`) });
    readers.push(r);
    expect(await r.getBlocks(hashes.slice(0, 3))).toEqual([undefined, undefined, undefined]);
    expect(await r.getBlocks(hashes.slice(3, 4))).toEqual([undefined]);
    expect(notices).toEqual(['warn: no block asked for was found in the node\'s block files; reading blocks from the node']);
  });

  it('a custom signet (its own message start): the message start is read from the first record', async () => {
    const dir = folder();
    writeBlockFile(dir, 0, blockRecords(hashes.slice(0, 6), [0x1e, 0x2d, 0x3c, 0x4b]));
    const r = new BlockFileReader({ folder: dir, network: 'signet' });
    readers.push(r);
    expect((await r.getBlocks([hashes[4]!, hashes[0]!])).map((b) => b?.hash)).toEqual([hashes[4], hashes[0]]);
  });

  it('a folder that is not there: nothing found, the failure said once', async () => {
    const notices: string[] = [];
    const r = reader(join(tmpdir(), 'wcs-no-such-folder', 'blocks'), notices);
    expect(await r.getBlocks(hashes.slice(0, 2))).toEqual([undefined, undefined]);
    expect(await r.getBlocks(hashes.slice(0, 2))).toEqual([undefined, undefined]);
    expect(notices).toEqual(['warn: reading the node\'s block files failed; reading blocks from the node']);
  });

  it('few places kept: a block whose place was dropped is found again from the first file', async () => {
    const dir = folder();
    writeBlockFile(dir, 0, blockRecords(hashes.slice(0, 6)));
    writeBlockFile(dir, 1, blockRecords(hashes.slice(6)));
    const r = new BlockFileReader({ folder: dir, network: 'regtest', maxPlaces: 3 });
    readers.push(r);
    expect((await r.getBlocks([hashes.at(-1)!])).map((b) => b?.hash)).toEqual([hashes.at(-1)]);
    expect((await r.getBlocks([hashes[1]!, hashes[0]!])).map((b) => b?.hash)).toEqual([hashes[1], hashes[0]]);
    expect((await r.getBlocks(hashes.slice(6, 8))).map((b) => b?.hash)).toEqual(hashes.slice(6, 8));
  });

  it('a pruned node\'s folder (the first files deleted): blocks found from the lowest file on', async () => {
    const dir = folder();
    writeBlockFile(dir, 3, blockRecords(hashes.slice(0, 5)));
    writeBlockFile(dir, 4, blockRecords(hashes.slice(5)));
    expect((await reader(dir).getBlocks([hashes[7]!, hashes[2]!])).map((b) => b?.hash)).toEqual([hashes[7], hashes[2]]);
  });

  it('a block whose header does not hash to the hash asked for is not returned', async () => {
    const dir = folder();
    const plain = blockRecords(hashes.slice(0, 3));
    // The last byte of the second block's nonce.
    const second = 8 + fromHex(recordedBlocks[hashes[0]!]!.hex).length + 8 + 79;
    plain[second]! ^= 0xff;
    writeBlockFile(dir, 0, plain);
    const blocks = await reader(dir).getBlocks(hashes.slice(0, 3));
    expect(blocks[0]?.hash).toBe(hashes[0]);
    expect(blocks[1]).toBeUndefined();
  });
});

describe('where reading the files starts: near the blocks asked for, by the node\'s heights', () => {
  const heightOf = (hash: string) => recordedBlocks[hash]?.height;
  /** Writes the recorded blocks ten to a file, as the node would, in this order; returns each file's blocks. */
  function filesOf(dir: string, order: readonly string[]): string[][] {
    const files = Array.from({ length: Math.ceil(order.length / 10) }, (_, n) => order.slice(n * 10, n * 10 + 10));
    files.forEach((blocks, n) => writeBlockFile(dir, n, blockRecords(blocks)));
    return files;
  }
  function nearReader(dir: string, outOfOrder: number) {
    const starts: Array<{ file: number; height: number }> = [];
    const notices: string[] = [];
    const r = new BlockFileReader({
      folder: dir,
      network: 'regtest',
      outOfOrder,
      heightsOf: async (asked) => asked.map(heightOf),
      log: (level, message, details) => {
        notices.push(`${level}: ${message}`);
        if (message.includes('from a later file')) starts.push({ file: details!.file as number, height: details!.height as number });
      },
    });
    readers.push(r);
    return { r, starts, notices };
  }
  /** The file a reader should start at for a block of this height: the last whose first block is `outOfOrder` below it. */
  const expectedStart = (files: string[][], height: number, outOfOrder: number) =>
    files.findLastIndex((blocks) => heightOf(blocks[0]!)! <= height - outOfOrder);

  it('a block near the tip: reading starts at a late file; older blocks asked for next are found from an earlier one', async () => {
    const dir = folder();
    const files = filesOf(dir, hashes);
    expect(files.length).toBe(14);
    const { r, starts, notices } = nearReader(dir, 5);
    const tip = hashes.at(-1)!;
    expect((await r.getBlocks([tip])).map(shape)).toEqual([shape(recorded(tip))]);
    expect(starts).toEqual([{ file: expectedStart(files, heightOf(tip)!, 5), height: heightOf(files[expectedStart(files, heightOf(tip)!, 5)]![0]!) }]);
    expect(starts[0]!.file).toBeGreaterThanOrEqual(11);
    // An older wallet's scan: its blocks lie before where reading started.
    const older = hashes.slice(40, 48);
    expect((await r.getBlocks(older)).map((b) => b?.hash)).toEqual(older);
    expect(starts.at(-1)!.file).toBe(expectedStart(files, heightOf(older[0]!)!, 5));
    expect((await r.getBlocks(hashes.slice(-3))).map((b) => b?.hash)).toEqual(hashes.slice(-3));
    expect(notices.filter((n) => n.startsWith('warn'))).toEqual([]);
  });

  it('blocks written out of height order within the margin: a scan from a late birthday finds every block', async () => {
    const dir = folder();
    // Each file's last block swapped with the next file's first two: written up to three heights late.
    const order = [...hashes];
    for (let n = 10; n < order.length - 1; n += 10) [order[n - 1], order[n], order[n + 1]] = [order[n + 1]!, order[n - 1]!, order[n]!];
    filesOf(dir, order);
    const { r, starts } = nearReader(dir, 4);
    const scanned = hashes.slice(70);
    for (let i = 0; i < scanned.length; i += 8) {
      const batch = scanned.slice(i, i + 8);
      expect((await r.getBlocks(batch)).map(shape)).toEqual(batch.map((hash) => shape(recorded(hash))));
    }
    expect(starts.length).toBe(1);
    expect(starts[0]!.file).toBeGreaterThan(0);
  });

  it('two scans in turn, a newer wallet\'s and an older one\'s: every block found, reading started again once', async () => {
    const dir = folder();
    const files = filesOf(dir, hashes);
    const { r, starts, notices } = nearReader(dir, 5);
    const [newer, older] = [hashes.slice(100), hashes.slice(20, 54)];
    for (let i = 0; i < Math.max(newer.length, older.length); i += 8) {
      for (const scan of [newer, older]) {
        const batch = scan.slice(i, i + 8);
        if (batch.length > 0) expect((await r.getBlocks(batch)).map((b) => b?.hash)).toEqual(batch);
      }
    }
    // Reading started near the newer wallet's blocks, then once further back for the older one's; from there one
    // cursor serves both going forward.
    expect(starts.map((start) => start.file)).toEqual([expectedStart(files, heightOf(newer[0]!)!, 5), expectedStart(files, heightOf(older[0]!)!, 5)]);
    expect(starts[1]!.file).toBeGreaterThan(0);
    expect(notices.filter((n) => n.includes('failed'))).toEqual([]);
  });

  it('two scans at once, a newer wallet\'s and an older one\'s, each batch asked while the other\'s is read: every block found', async () => {
    const dir = folder();
    filesOf(dir, hashes);
    const { r, notices } = nearReader(dir, 5);
    const [newer, older] = [hashes.slice(100), hashes.slice(20, 54)];
    const scan = async (wanted: string[]) => {
      const found: Array<string | undefined> = [];
      for (let i = 0; i < wanted.length; i += 8) found.push(...(await r.getBlocks(wanted.slice(i, i + 8))).map((b) => b?.hash));
      return found;
    };
    expect(await Promise.all([scan(newer), scan(older), scan(newer)])).toEqual([newer, older, newer]);
    expect(notices.filter((n) => n.includes('failed'))).toEqual([]);
  });

  it('the tip before the node has written it: left to the node without reading from the first file, found once written', async () => {
    const dir = folder();
    const files = filesOf(dir, hashes.slice(0, -1));
    // Reading file 0 fails: reading from the first file would say so.
    rmSync(join(dir, 'blk00000.dat'));
    mkdirSync(join(dir, 'blk00000.dat'));
    const { r, notices } = nearReader(dir, 5);
    expect((await r.getBlocks(hashes.slice(-9, -1))).map((b) => b?.hash)).toEqual(hashes.slice(-9, -1));
    expect(await r.getBlocks([hashes.at(-1)!])).toEqual([undefined]);
    writeBlockFile(dir, files.length - 1, blockRecords([...files.at(-1)!, hashes.at(-1)!]));
    expect((await r.getBlocks([hashes.at(-1)!])).map((b) => b?.hash)).toEqual([hashes.at(-1)]);
    expect(notices.filter((n) => n.includes('failed'))).toEqual([]);
  });
});

describe('the chain source with the node\'s blocks folder', () => {
  const timeline = loadFixture('timeline');
  const last = timeline.snapshots.length - 1;
  const chain = timeline.snapshots[last].chain as string[];

  async function sourceOn(filters: boolean) {
    const node = await startRpcTestServer({ snapshot: last, filters });
    const dir = folder();
    // The files hold all but the tip (a block the service asks for before the files have it, in effect).
    writeBlockFile(dir, 0, blockRecords(chain.slice(0, -1)));
    const notices: string[] = [];
    const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', log: (level, message) => notices.push(`${level}: ${message}`), retries: 0, blocksFolder: dir });
    readers.push(node, source);
    return { node, source, notices };
  }

  it('a node without filters: a scan\'s blocks come from the files, a block not there from the node', async () => {
    const { node, source, notices } = await sourceOn(false);
    const summaries = await source.getBlockSummaries(0, chain.length - 1);
    expect(summaries.every((s) => s.filter === null)).toBe(true);
    const wanted = chain.slice(-5);
    const blocks = await source.getBlocks(wanted);
    expect(blocks.map((b) => b.hash)).toEqual(wanted);
    expect(blocks.map(shape)).toEqual((await Promise.all(wanted.map((hash) => source.getBlock(hash)))).map(shape));
    // The node was asked for the tip only, then for each block read one by one to compare.
    expect(node.calls.filter((c) => c.method === 'getblock').map((c) => c.params[0]).sort()).toEqual([chain.at(-1), ...wanted].sort());
    expect(notices).toContain('info: reading blocks from the node\'s block files');
  });

  it('a node with filters: blocks come from the node, the files are not read', async () => {
    const { node, source, notices } = await sourceOn(true);
    await source.getBlockSummaries(0, chain.length - 1);
    const wanted = chain.slice(-5);
    expect((await source.getBlocks(wanted)).map((b) => b.hash)).toEqual(wanted);
    expect(node.calls.filter((c) => c.method === 'getblock').map((c) => c.params[0])).toEqual(wanted);
    expect(notices.filter((n) => n.includes('block files'))).toEqual([]);
  });
});

describe('applyXorKey', () => {
  it('equals XORing byte by byte with key[file position % 8], at any position, length and alignment', () => {
    const data = Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff);
    for (let position = 0; position < 16; position++) {
      for (let length = 0; length <= 40; length++) {
        for (const shift of [0, 1, 2, 3, 4]) {
          const buffer = new Uint8Array(length + shift);
          buffer.set(data.subarray(0, length), shift);
          const bytes = buffer.subarray(shift);
          applyXorKey(bytes, position, XOR_KEY);
          const reference = data.subarray(0, length).map((b, i) => b ^ XOR_KEY[(position + i) % 8]!);
          expect(Array.from(bytes)).toEqual(Array.from(reference));
        }
      }
    }
  });
});
