/**
 * Block files laid out as Bitcoin Core writes them (`blk?????.dat`: per block the network's message start,
 * the size and the block; then zeros set aside; the whole file XORed with the key in `xor.dat`), holding the
 * regtest blocks Core recorded.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromHex } from '../../src/core/bytes.js';
import { loadFixture } from './fixtures.js';

export const recordedBlocks = loadFixture('blocks') as Record<string, { height: number; prev: string | null; hex: string }>;
const REGTEST_START = [0xfa, 0xbf, 0xb5, 0xda];
export const XOR_KEY = Uint8Array.from([0x2e, 0x2f, 0xcf, 0x3b, 0xef, 0x69, 0x16, 0x72]);
/** Zeros after the records, as the node sets aside room for later ones. */
const SET_ASIDE = 4096;

/** A new temporary blocks folder, with `xor.dat` holding `key` unless null. The caller removes it. */
export function blocksFolder(key: Uint8Array | null = XOR_KEY): string {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-block-files-'));
  if (key) writeFileSync(join(dir, 'xor.dat'), key);
  return dir;
}

/** The plain bytes of a block file holding these recorded blocks, in this order. */
export function blockRecords(blockHashes: readonly string[], messageStart: readonly number[] = REGTEST_START): Uint8Array {
  const parts = blockHashes.map((hash) => {
    const block = fromHex(recordedBlocks[hash]!.hex);
    const head = new Uint8Array(8);
    head.set(messageStart);
    new DataView(head.buffer).setUint32(4, block.length, true);
    return Buffer.concat([head, block]);
  });
  return Buffer.concat([...parts, new Uint8Array(SET_ASIDE)]);
}

/** Writes block file `n` as the node would: XORed with the folder's key by file position. */
export function writeBlockFile(dir: string, n: number, plain: Uint8Array, key: Uint8Array | null = XOR_KEY): void {
  const bytes = Uint8Array.from(plain);
  if (key) for (let i = 0; i < bytes.length; i++) bytes[i]! ^= key[i % 8]!;
  writeFileSync(join(dir, `blk${String(n).padStart(5, '0')}.dat`), bytes);
}
