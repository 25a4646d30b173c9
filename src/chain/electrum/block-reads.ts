/**
 * New blocks' own transactions through an Electrum server, so that a new tip costs its blocks' reads rather than a
 * read of every watched script's history: each block's txids by position (`blockchain.transaction.id_from_pos`, in
 * pages, until the server answers that there is none at the next position), believed only when they give the
 * header's merkle root with no pair repeated (`listsBlock`: the server left none out and added none), then the
 * transactions (`TransactionReader`, each checked against its txid), and what they touch: the script hashes their
 * outputs pay and the txids whose outputs their inputs spend.
 */
import { serializeTransaction } from '../../core/tx.js';
import { ChainError } from '../types.js';
import type { ElectrumCalls } from './calls.js';
import type { Header } from './headers.js';
import { scriptHashOf } from './histories.js';
import { isMerkleAmbiguous, listsBlock } from './merkle.js';
import type { TransactionReader } from './transactions.js';

/** What some blocks touch. */
export interface BlockTouches {
  /** Script hashes (the protocol's form) their outputs pay. */
  paid: Set<string>;
  /** Txids whose outputs their inputs spend. */
  spent: Set<string>;
  /** Transactions read. */
  transactions: number;
}

export type BlocksRead =
  | { ok: true; touches: BlockTouches }
  /** `too_many`: more transactions than the limits; `unproven`: a block's list or a transaction did not prove out. */
  | { ok: false; why: 'too_many' }
  | { ok: false; why: 'unproven'; height: number; reason: string };

/** Positions asked in the first page of a block; each next page asks twice as many, up to MOST_PER_PAGE. */
const FIRST_PAGE = 64;
const MOST_PER_PAGE = 1_200;
/** Transactions read and parsed in one step: the event loop gets a turn between slices of a large block. */
const TRANSACTIONS_PER_SLICE = 500;

const HASH = /^[0-9a-f]{64}$/;

/**
 * The txids of the block at `height`, in order, as the server lists them; `too_many` past `most` (not all read).
 * The list ends at the server's first error answer ("No transaction at position N for height H" in Fulcrum's
 * words, others word it otherwise): nothing is taken on trust, the caller checks the list against the header.
 */
export async function listBlockTxids(client: ElectrumCalls, height: number, most: number): Promise<string[] | 'too_many'> {
  const txids: string[] = [];
  for (let size = FIRST_PAGE; ; size = Math.min(size * 2, MOST_PER_PAGE)) {
    const start = txids.length;
    const calls = Array.from({ length: size }, (_, i) => ({ method: 'blockchain.transaction.id_from_pos', params: [height, start + i] }));
    const answers = await client.batchSettled(calls);
    for (const answer of answers) {
      if (!answer.ok) {
        if (answer.error.code !== 'rpc_error') throw answer.error;
        return txids;
      }
      if (typeof answer.result !== 'string' || !HASH.test(answer.result)) throw new ChainError('bad_response', 'The Electrum server sent an unexpected transaction id');
      txids.push(answer.result);
      if (txids.length > most) return 'too_many';
    }
  }
}

/** How many of the blocks' transactions may be listed, and how many read that the reader does not hold. */
export interface BlockReadLimits {
  listed: number;
  fetched: number;
}

/**
 * Reads the blocks (consecutive, linked, checked headers) and what they touch: every block's txids listed and proved
 * first, then the transactions, once the count of those to fetch (the reader does not hold them) is within limits.
 * Their positions are given to `reader`, so that proving one of them in its block asks the server nothing more.
 */
export async function readBlocks(client: ElectrumCalls, reader: TransactionReader, headers: readonly Header[], limits: BlockReadLimits): Promise<BlocksRead> {
  const lists: string[][] = [];
  let listed = 0;
  for (const header of headers) {
    const txids = await listBlockTxids(client, header.height, limits.listed - listed);
    if (txids === 'too_many') return { ok: false, why: 'too_many' };
    if (!listsBlock(txids, header.merkleRoot)) {
      return { ok: false, why: 'unproven', height: header.height, reason: `the ${txids.length} txids listed do not give the header's merkle root` };
    }
    lists.push(txids);
    listed += txids.length;
  }
  if (lists.reduce((n, txids) => n + txids.filter((txid) => !reader.holds(txid)).length, 0) > limits.fetched) return { ok: false, why: 'too_many' };
  const touches: BlockTouches = { paid: new Set(), spent: new Set(), transactions: listed };
  for (const [b, header] of headers.entries()) {
    const txids = lists[b]!;
    for (let start = 0; start < txids.length; start += TRANSACTIONS_PER_SLICE) {
      const slice = txids.slice(start, start + TRANSACTIONS_PER_SLICE);
      const transactions = await reader.get(slice);
      for (const [i, tx] of transactions.entries()) {
        // A 64-byte transaction could stand for an inner node of the tree: the list would not prove the block.
        if (isMerkleAmbiguous(serializeTransaction(tx, { witness: false }).length)) {
          return { ok: false, why: 'unproven', height: header.height, reason: `transaction ${slice[i]} is 64 bytes` };
        }
        for (const output of tx.outputs) touches.paid.add(scriptHashOf(output.script));
        // The coinbase (position 0) spends nothing.
        if (start + i > 0) for (const input of tx.inputs) touches.spent.add(input.txid);
      }
    }
    reader.placeInBlock(header, txids);
  }
  return { ok: true, touches };
}
