/**
 * Transactions read from the Electrum server (`blockchain.transaction.get`), each once while it stays in a bounded
 * cache, checked to hash to the txid asked for; confirmed ones proved in their block (`get_merkle`) against the
 * header checked here before they are used.
 */
import { parseTransactionWithTxid, serializeTransaction, type Transaction } from '../../core/tx.js';
import { ChainError, type ChainLog } from '../types.js';
import type { ElectrumCalls } from './calls.js';
import type { Header } from './headers.js';
import { isMerkleAmbiguous, parseMerkleProof, provesInBlock } from './merkle.js';

/**
 * Transactions asked for in one page from a server on this machine (the client keeps two pages in flight). Fulcrum
 * fetches each from its node, and answers far slower when many are outstanding: 300 transactions read in 0.08-0.14 s
 * in pages of 1 to 3, 0.6 s of 5, 2.0-2.5 s of 10, 3.2-3.5 s of 20 and 4.2-4.4 s of 64 (bench/electrum/
 * block-reads.bench.mjs, Fulcrum 2.1.1 on loopback). A distant server's pages are sized by their answers, as every
 * batch: there each page waits for the link (150 pages of two would be 150 round trips through Tor).
 */
export const TRANSACTIONS_PER_PAGE_ON_LOOPBACK = 2;
/** Transactions kept after reading (about 1 to 2 kB each parsed). */
const CACHED_TRANSACTIONS = 5_000;
/** Proofs remembered (txid in block): a second group scanning the same blocks asks for none again. */
const REMEMBERED_PROOFS = 50_000;

/** A map that forgets its oldest entries past `limit`. */
class Bounded<V> extends Map<string, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.limit) this.delete(this.keys().next().value!);
    return this;
  }
}

/** A block's transactions, or why they could not be given: the server's chain or histories moved meanwhile. */
export type BlockTransactions = { ok: true; transactions: Transaction[] } | { ok: false; moved: string };

export class TransactionReader {
  private readonly cache = new Bounded<Transaction>(CACHED_TRANSACTIONS);
  /** Position in its block of a proved transaction, by `blockhash:txid`. */
  private readonly proved = new Bounded<number>(REMEMBERED_PROOFS);

  constructor(
    private readonly client: ElectrumCalls,
    private readonly log?: ChainLog,
    /** Transactions asked for a page (undefined: pages sized by their answers). */
    private readonly perPage?: number,
  ) {}

  /** True when the transaction is held (read lately): `get` asks the server nothing for it. */
  holds(txid: string): boolean {
    return this.cache.has(txid);
  }

  /** The transactions (read once, then from the cache), in the order asked. */
  async get(txids: readonly string[]): Promise<Transaction[]> {
    const missing = [...new Set(txids.filter((txid) => !this.cache.has(txid)))];
    if (missing.length > 0) {
      const answers = await this.client.batch(
        missing.map((txid) => ({ method: 'blockchain.transaction.get', params: [txid, false] })),
        this.perPage === undefined ? {} : { maxCallsPerPage: this.perPage },
      );
      answers.forEach((hex, i) => this.cache.set(missing[i]!, parseChecked(hex, missing[i]!)));
    }
    // Read now, so that what the cache forgot meanwhile is asked for again rather than lost.
    const out: Transaction[] = [];
    for (const txid of txids) out.push(this.cache.get(txid) ?? (await this.get([txid]))[0]!);
    return out;
  }

  /**
   * Proves the transactions in their blocks, several blocks in one batch (read ahead of the blocks applied).
   * Returns the blocks whose proofs could not be had because the server's chain or histories moved.
   */
  async prove(items: ReadonlyArray<{ header: Header; txids: readonly string[] }>): Promise<Set<string>> {
    const wanted = items.flatMap(({ header, txids }) => txids.filter((txid) => !this.proved.has(`${header.hash}:${txid}`)).map((txid) => ({ header, txid })));
    const moved = new Set<string>();
    if (wanted.length === 0) return moved;
    const [proofs, txs] = await Promise.all([
      this.client.batchSettled(wanted.map(({ header, txid }) => ({ method: 'blockchain.transaction.get_merkle', params: [txid, header.height] }))),
      this.get(wanted.map((w) => w.txid)),
    ]);
    const depths = new Map<string, number>();
    for (const [i, { header, txid }] of wanted.entries()) {
      const answer = proofs[i]!;
      // The server no longer has it at that height: the block or the history changed since they were read.
      if (!answer.ok) {
        if (answer.error.code !== 'rpc_error') throw answer.error;
        moved.add(header.hash);
        continue;
      }
      const proof = parseMerkleProof(answer.result, header.height);
      const depth = depths.get(header.hash) ?? proof.branch.length;
      depths.set(header.hash, depth);
      const stripped = serializeTransaction(txs[i]!, { witness: false }).length;
      if (!provesInBlock(txid, proof, header.merkleRoot) || proof.branch.length !== depth || isMerkleAmbiguous(stripped)) {
        this.log?.('warn', 'Electrum server sent a merkle proof that does not hold; nothing of its block is applied', { height: header.height, block: header.hash, txid });
        throw new ChainError('bad_response', `The Electrum server's proof that transaction ${txid} is in block ${header.hash} does not hold`);
      }
      this.proved.set(`${header.hash}:${txid}`, proof.pos);
    }
    return moved;
  }

  /** Takes the positions of a block's whole list of txids, already proved against its header (`listsBlock`). */
  placeInBlock(header: Header, txids: readonly string[]): void {
    txids.forEach((txid, pos) => this.proved.set(`${header.hash}:${txid}`, pos));
  }

  /** A block's transactions among `txids`, proved (read and proved now if not yet), in their order in the block. */
  async inBlock(header: Header, txids: readonly string[]): Promise<BlockTransactions> {
    const unique = [...new Set(txids)];
    const moved = await this.prove([{ header, txids: unique }]);
    if (moved.size > 0) return { ok: false, moved: header.hash };
    const transactions = await this.get(unique);
    const order = unique.map((txid, i) => ({ tx: transactions[i]!, pos: this.proved.get(`${header.hash}:${txid}`) ?? 0 }));
    order.sort((a, b) => a.pos - b.pos);
    return { ok: true, transactions: order.map((o) => o.tx) };
  }
}

function parseChecked(hex: unknown, txid: string): Transaction {
  if (typeof hex !== 'string') throw new ChainError('bad_response', `The Electrum server sent an unexpected answer for transaction ${txid}`);
  let parsed: { tx: Transaction; txid: string };
  try {
    parsed = parseTransactionWithTxid(hex);
  } catch {
    throw new ChainError('bad_response', `The Electrum server sent a transaction ${txid} that does not parse`);
  }
  if (parsed.txid !== txid) throw new ChainError('bad_response', `The Electrum server sent another transaction when asked for ${txid}`);
  return parsed.tx;
}
