/**
 * Electrum header and merkle checks on real data: the blocks Bitcoin Core mined in the recorded regtest timeline
 * (a reorg included), and mainnet's genesis header for the proof of work. Merkle branches are built here from the
 * blocks' transactions the way an Electrum server builds them, then checked by merkle.ts; so are blocks' whole
 * lists of txids, complete or with one left out, repeated or changed.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { ChainError } from '../../../src/chain/types.js';
import { checkHeader, checkHeaders, GENESIS_HASHES, HeaderChain, parseHeader, parseHeaders, targetOf, type Header } from '../../../src/chain/electrum/headers.js';
import { isMerkleAmbiguous, listsBlock, parseMerkleProof, provesInBlock, type MerkleProof } from '../../../src/chain/electrum/merkle.js';
import { fromHex, reverseHex, toHex } from '../../../src/core/bytes.js';
import { parseBlock, txid as txidOf } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

interface RecordedBlock {
  height: number;
  prev: string | null;
  hex: string;
}
const blocks = loadFixture<Record<string, RecordedBlock>>('blocks');
const timeline = loadFixture<{ snapshots: Array<{ chain: string[] }> }>('timeline');
const headerHex = (hash: string) => blocks[hash]!.hex.slice(0, 160);
/** The active chain at the end of the timeline, and a block that left it in the reorg. */
const finalChain = timeline.snapshots.at(-1)!.chain;
const staleHash = Object.keys(blocks).find((hash) => !finalChain.includes(hash))!;

const MAINNET_GENESIS =
  '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c';

const hash256 = (b: Uint8Array) => sha256(sha256(b));

/** The branch of the transaction at `pos` among `txids` (display hex), as an Electrum server sends it. */
function branchOf(txids: string[], pos: number): MerkleProof {
  let level = txids.map((t) => fromHex(t).reverse());
  const branch: string[] = [];
  for (let i = pos; level.length > 1; i >>= 1) {
    if (level.length % 2 === 1) level.push(level.at(-1)!);
    branch.push(reverseHex(level[i ^ 1]!));
    const next: Uint8Array[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(hash256(new Uint8Array([...level[j]!, ...level[j + 1]!])));
    level = next;
  }
  return { pos, branch };
}

const headerAt = (chain: string[], height: number) => parseHeader(fromHex(headerHex(chain[height]!)), height);

describe('Electrum headers', () => {
  it('parses a recorded header: hash computed from the bytes, parent, time, merkle root', () => {
    const hash = finalChain[5]!;
    const header = headerAt(finalChain, 5);
    expect(header.hash).toBe(hash);
    expect(header.prevHash).toBe(finalChain[4]);
    expect(header.time).toBe(parseBlock(blocks[hash]!.hex).time);
    expect(header.bits).toBe(0x207fffff);
    expect(parseHeader(fromHex(headerHex(finalChain[0]!)), 0).hash).toBe(GENESIS_HASHES.regtest);
  });

  it('parses a run of headers that link, and refuses one that does not', () => {
    const hex = finalChain.slice(10, 20).map(headerHex).join('');
    const headers = parseHeaders(hex, 10, 10);
    expect(headers.map((h) => h.hash)).toEqual(finalChain.slice(10, 20));
    const gap = [11, 12, 14].map((h) => headerHex(finalChain[h]!)).join('');
    expect(() => parseHeaders(gap, 11, 3)).toThrow(/do not link at height 13/);
    expect(() => parseHeaders(hex, 10, 9)).toThrow(ChainError);
    expect(() => parseHeaders('zz', 10, 1)).toThrow(/not hex/);
  });

  it('checks the link to the header before', () => {
    const prev = headerAt(finalChain, 30);
    expect(() => checkHeader('regtest', headerAt(finalChain, 31), prev)).not.toThrow();
    expect(() => checkHeader('regtest', headerAt(finalChain, 32), prev)).toThrow(/does not link/);
  });

  it("checks mainnet's proof of work: the genesis header passes, with another nonce it fails", () => {
    const genesis = parseHeader(fromHex(MAINNET_GENESIS), 0);
    expect(genesis.hash).toBe(GENESIS_HASHES.mainnet);
    expect(() => checkHeader('mainnet', genesis, undefined)).not.toThrow();
    const tampered = fromHex(MAINNET_GENESIS);
    tampered[79] = tampered[79]! ^ 1;
    expect(() => checkHeader('mainnet', parseHeader(tampered, 0), undefined)).toThrow(/proof of work/);
    // Regtest's easy bits are beyond mainnet's limit: a regtest header is no mainnet header.
    expect(() => checkHeader('mainnet', headerAt(finalChain, 1), undefined)).toThrow(/invalid difficulty/);
    expect(() => checkHeaders('regtest', [headerAt(finalChain, 1), headerAt(finalChain, 2)], headerAt(finalChain, 0))).not.toThrow();
  });

  it('reads compact bits as Bitcoin Core does', () => {
    expect(targetOf(0x1d00ffff)).toBe(0xffffn << 208n);
    expect(targetOf(0x207fffff)).toBe(0x7fffffn << 232n);
    expect(targetOf(0x03123456)).toBe(0x123456n);
    expect(targetOf(0x04923456)).toBeNull(); // negative
  });
});

describe('Electrum header chain', () => {
  /** A server holding `chain` (block hashes by height): the headers read from it, as the source reads them. */
  const serverOf = (chain: string[]) => ({
    reads: 0,
    read(height: number, count: number): Promise<Header[]> {
      this.reads++;
      const end = Math.min(chain.length, height + count);
      return Promise.resolve(parseHeaders(chain.slice(height, end).map(headerHex).join(''), height, end - height));
    },
  });

  it('extends the kept chain with each new tip, and finds the fork point of a reorg from the headers alone', async () => {
    const stale = blocks[staleHash]!;
    // The chain as it was with the stale block at its tip, and the final chain that replaced it.
    const before = [...finalChain.slice(0, stale.height), staleHash];
    expect(before[stale.height - 1]).toBe(stale.prev);
    const server = serverOf(before);
    const chain = new HeaderChain('regtest', (h, n) => server.read(h, n), 50);
    expect(await chain.setTip(headerAt(before, stale.height - 1))).toBeUndefined();
    expect(await chain.setTip(headerAt(before, stale.height))).toBeUndefined();
    expect(chain.tip!.hash).toBe(staleHash);
    expect(chain.kept(stale.height - 1)!.hash).toBe(stale.prev);

    const after = serverOf(finalChain);
    const moved = new HeaderChain('regtest', (h, n) => after.read(h, n), 50);
    await moved.setTip(headerAt(before, stale.height - 1));
    await moved.setTip(headerAt(before, stale.height));
    // The new tip does not link to the kept stale block: read back to where the chains meet.
    const tipHeight = finalChain.length - 1;
    expect(await moved.setTip(headerAt(finalChain, tipHeight))).toBe(stale.height);
    expect(moved.kept(stale.height)!.hash).toBe(finalChain[stale.height]);
    expect(moved.kept(tipHeight)!.hash).toBe(finalChain[tipHeight]);
    expect(moved.kept(stale.height - 1)!.hash).toBe(stale.prev);
  });

  it('a tip several blocks ahead is no reorg; only the last `keep` headers are kept', async () => {
    const server = serverOf(finalChain);
    const chain = new HeaderChain('regtest', (h, n) => server.read(h, n), 20);
    await chain.setTip(headerAt(finalChain, 40));
    expect(await chain.setTip(headerAt(finalChain, 100))).toBeUndefined();
    expect(chain.kept(100)!.hash).toBe(finalChain[100]);
    expect(chain.kept(81)!.hash).toBe(finalChain[81]);
    expect(chain.kept(80)).toBeUndefined();
  });

  it('refuses a tip whose chain does not link', async () => {
    const server = serverOf(finalChain);
    // A header of another chain (the stale block) claimed at the next height of a chain that never had it.
    const chain = new HeaderChain('regtest', async (h, n) => {
      const headers = await server.read(h, n);
      const stale = blocks[staleHash]!;
      return headers.map((x) => (x.height === stale.height - 1 ? { ...x, hash: '00'.repeat(32) } : x));
    }, 50);
    await chain.setTip(headerAt(finalChain, 10));
    const stale = blocks[staleHash]!;
    await expect(chain.setTip(parseHeader(fromHex(headerHex(staleHash)), stale.height))).rejects.toThrow(/does not link/);
  });
});

describe('Electrum merkle proofs', () => {
  const withTxs = finalChain.map((hash) => ({ hash, block: parseBlock(blocks[hash]!.hex) })).filter((b) => b.block.transactions.length >= 3);

  it('proves every transaction of the recorded blocks that hold several, at its place', () => {
    expect(withTxs.length).toBeGreaterThan(0);
    for (const { hash, block } of withTxs) {
      const root = parseHeader(fromHex(headerHex(hash)), 0).merkleRoot;
      const txids = block.transactions.map((tx) => txidOf(tx));
      txids.forEach((txid, pos) => {
        const proof = branchOf(txids, pos);
        expect(provesInBlock(txid, proof, root)).toBe(true);
        // Elsewhere in the block, or with a sibling changed, the same proof proves nothing (the last of an odd
        // count is its own sibling: there the other place is the same).
        expect(provesInBlock(txid, { ...proof, pos: pos ^ 1 }, root)).toBe(proof.branch[0] === txid);
        const changed = [...proof.branch];
        changed[0] = '00'.repeat(32);
        expect(provesInBlock(txid, { ...proof, branch: changed }, root)).toBe(false);
      });
    }
  });

  it('a coinbase-only block: the root is the txid, the branch empty', () => {
    const hash = finalChain[3]!;
    const block = parseBlock(blocks[hash]!.hex);
    expect(block.transactions).toHaveLength(1);
    const root = parseHeader(fromHex(headerHex(hash)), 3).merkleRoot;
    expect(provesInBlock(txidOf(block.transactions[0]!), { pos: 0, branch: [] }, root)).toBe(true);
    expect(provesInBlock(txidOf(block.transactions[0]!), { pos: 1, branch: [] }, root)).toBe(false);
  });

  it("checks the answer's shape: height, position, hashes", () => {
    const { block } = withTxs[0]!;
    const txids = block.transactions.map((tx) => txidOf(tx));
    const proof = branchOf(txids, 1);
    expect(parseMerkleProof({ block_height: 7, merkle: proof.branch, pos: 1 }, 7)).toEqual(proof);
    expect(() => parseMerkleProof({ block_height: 8, merkle: proof.branch, pos: 1 }, 7)).toThrow(ChainError);
    expect(() => parseMerkleProof({ block_height: 7, merkle: ['xy'], pos: 1 }, 7)).toThrow(ChainError);
    expect(() => parseMerkleProof({ block_height: 7, merkle: proof.branch, pos: -1 }, 7)).toThrow(ChainError);
    expect(() => parseMerkleProof(null, 7)).toThrow(ChainError);
    expect(isMerkleAmbiguous(64)).toBe(true);
    expect(toHex(new Uint8Array([1]))).toBe('01');
  });
});

describe("A block's whole list of txids against its header", () => {
  const recorded = finalChain.map((hash, height) => ({ header: headerAt(finalChain, height), txids: parseBlock(blocks[hash]!.hex).transactions.map((tx) => txidOf(tx)) }));
  const largest = recorded.reduce((a, b) => (b.txids.length > a.txids.length ? b : a));

  it('holds for every recorded block, from a coinbase alone to the largest', () => {
    expect(largest.txids.length).toBe(9);
    for (const { header, txids } of recorded) expect(listsBlock(txids, header.merkleRoot)).toBe(true);
  });

  it('fails with the last txid left out, or any other, or none at all', () => {
    const { header, txids } = largest;
    expect(listsBlock(txids.slice(0, -1), header.merkleRoot)).toBe(false);
    for (let i = 0; i < txids.length; i++) expect(listsBlock(txids.filter((_, j) => j !== i), header.merkleRoot)).toBe(false);
    expect(listsBlock([], header.merkleRoot)).toBe(false);
  });

  it('fails with the last txid repeated, though the root is the same (an odd count pairs the last with itself)', () => {
    const { header, txids } = largest;
    const repeated = [...txids, txids.at(-1)!];
    // The same root: what a server ending its list one position late would give.
    expect(branchOf(repeated, 0)).toEqual(branchOf(txids, 0));
    expect(listsBlock(repeated, header.merkleRoot)).toBe(false);
  });

  it('fails with the last pair repeated above the first level (six txids listed as eight)', () => {
    // Six real txids: the second level has three nodes, the last paired with itself; listing the last two txids
    // twice gives the same root, which only the pair of equal nodes one level up shows.
    const six = largest.txids.slice(0, 6);
    const root = fromHex(merkleRootOfList(six)).reverse();
    expect(listsBlock(six, root)).toBe(true);
    const eight = [...six, six[4]!, six[5]!];
    expect(merkleRootOfList(eight)).toBe(merkleRootOfList(six));
    expect(listsBlock(eight, root)).toBe(false);
  });

  it('fails with a txid changed, two swapped, or one that is not a hash', () => {
    const { header, txids } = largest;
    const changed = [...txids];
    changed[3] = '00'.repeat(32);
    expect(listsBlock(changed, header.merkleRoot)).toBe(false);
    const swapped = [...txids];
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    expect(listsBlock(swapped, header.merkleRoot)).toBe(false);
    expect(listsBlock([...txids.slice(0, -1), 'zz'], header.merkleRoot)).toBe(false);
    // Another block's header.
    expect(listsBlock(txids, recorded[3]!.header.merkleRoot)).toBe(false);
  });
});

/** The merkle root of `txids` (display hex), built level by level as Bitcoin does. */
function merkleRootOfList(txids: string[]): string {
  let level = txids.map((t) => fromHex(t).reverse());
  while (level.length > 1) {
    if (level.length % 2 === 1) level.push(level.at(-1)!);
    const next: Uint8Array[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(hash256(new Uint8Array([...level[j]!, ...level[j + 1]!])));
    level = next;
  }
  return reverseHex(level[0]!);
}
