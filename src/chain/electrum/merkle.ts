/**
 * Merkle proofs (`blockchain.transaction.get_merkle`): a confirmed transaction is believed only when its txid,
 * hashed up the branch the server sent, gives the merkle root of a header checked here. So a server cannot make
 * up a confirmed payment: it would need a block with that transaction and real proof of work.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { fromHex } from '../../core/bytes.js';
import { ChainError } from '../types.js';

export interface MerkleProof {
  /** The transaction's position in the block. */
  pos: number;
  /** The sibling hashes from the transaction up, display hex as the server sends them. */
  branch: string[];
}

const HASH = /^[0-9a-f]{64}$/;
/** Enough levels for any block (a block holds far fewer than 2^32 transactions). */
const MAX_DEPTH = 32;

const bad = (message: string) => new ChainError('bad_response', message);

/** Display hex to internal byte order. */
function internal(hex: string): Uint8Array {
  return fromHex(hex).reverse();
}

/** A `blockchain.transaction.get_merkle` answer, shape checked. */
export function parseMerkleProof(answer: unknown, height: number): MerkleProof {
  const a = answer as { block_height?: unknown; merkle?: unknown; pos?: unknown } | null;
  if (
    typeof a !== 'object' ||
    a === null ||
    a.block_height !== height ||
    !Number.isSafeInteger(a.pos) ||
    (a.pos as number) < 0 ||
    !Array.isArray(a.merkle) ||
    a.merkle.length > MAX_DEPTH ||
    !a.merkle.every((h) => typeof h === 'string' && HASH.test(h))
  ) {
    throw bad(`The Electrum server sent an unexpected merkle proof for a transaction at height ${height}`);
  }
  return { pos: a.pos as number, branch: a.merkle as string[] };
}

/** The merkle root (internal byte order) the proof gives for `txid`. */
export function merkleRootOf(txid: string, proof: MerkleProof): Uint8Array {
  let node = internal(txid);
  let pos = proof.pos;
  for (const sibling of proof.branch) {
    node = pos & 1 ? parentOf(internal(sibling), node) : parentOf(node, internal(sibling));
    pos = Math.floor(pos / 2);
  }
  return node;
}

/**
 * True when the proof puts `txid` in the block whose header holds `merkleRoot`. The position must fit the
 * branch (no bit left over), so one proof cannot stand for two places.
 */
export function provesInBlock(txid: string, proof: MerkleProof, merkleRoot: Uint8Array): boolean {
  if (proof.pos >= 2 ** proof.branch.length) return false;
  return equal(merkleRootOf(txid, proof), merkleRoot);
}

/**
 * A transaction of exactly 64 bytes (without witness) could pass for an inner node of the merkle tree; Bitcoin
 * Core refuses them since 0.16 as non-standard, and a proof of one proves nothing.
 */
export const isMerkleAmbiguous = (strippedSize: number): boolean => strippedSize === 64;

/**
 * True when `txids` (display hex, in block order) are exactly the block's whose header holds `merkleRoot`: their
 * merkle root is that one, and no two hashes paired at any level are equal. Bitcoin pairs the last hash of an odd
 * level with itself, so a list with its last txids repeated ([a, b, c] and [a, b, c, c]) gives the same root; as
 * Bitcoin Core's ComputeMerkleRoot, such a "mutated" list is refused (a real block never pairs two equal txids).
 */
export function listsBlock(txids: readonly string[], merkleRoot: Uint8Array): boolean {
  if (txids.length === 0 || !txids.every((txid) => HASH.test(txid))) return false;
  let level = txids.map(internal);
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i]!;
      const right = level[i + 1];
      if (right !== undefined && equal(left, right)) return false;
      next.push(parentOf(left, right ?? left));
    }
    level = next;
  }
  return equal(level[0]!, merkleRoot);
}

/** The tree's node above two (internal byte order): double SHA-256 of both. */
function parentOf(left: Uint8Array, right: Uint8Array): Uint8Array {
  const pair = new Uint8Array(64);
  pair.set(left, 0);
  pair.set(right, 32);
  return sha256(sha256(pair));
}

const equal = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((byte, i) => byte === b[i]);
