/**
 * The node's mempool as the sync reads it, kept between reads: each read lists the txids (`getrawmempool
 * false`), fetches and parses only those not held yet, and forgets those no longer listed. On mainnet (tens of
 * thousands of transactions, hundreds of MB of hex) a read then costs what changed since the last one, not the
 * whole mempool. What is held is bounded by the node's own mempool (`maxmempool`): per transaction its bytes
 * (binary, not hex), its inputs and the time the node first saw it; outputs are decoded only when looked at.
 */
import { parseTransactionForScan, type BlockTransaction } from '../../core/block.js';
import { ChainError } from '../types.js';
import type { BatchOutcome } from './rpc-client.js';
import { isNotFound } from './rpc-errors.js';
import { expectHash, expectHexBytes, expectInteger, expectObject } from './values.js';

export interface HeldMempoolTx {
  txid: string;
  tx: BlockTransaction;
  /** When the node first saw it (seconds). */
  time: number;
}

export interface MempoolRpc {
  call(method: string, params: unknown[]): Promise<unknown>;
  batch(calls: Array<{ method: string; params: unknown[] }>): Promise<BatchOutcome[]>;
}

export class MempoolCache {
  private held = new Map<string, HeldMempoolTx>();
  private snapshot: HeldMempoolTx[] = [];
  private reading: Promise<HeldMempoolTx[]> | undefined;

  constructor(
    private readonly rpc: MempoolRpc,
    /** Transactions fetched per JSON-RPC batch. */
    private readonly batchSize: number,
  ) {}

  /** Every transaction in the node's mempool; reads running at once share one. */
  read(): Promise<HeldMempoolTx[]> {
    this.reading ??= this.refresh().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** How many transactions are held (for tests and benchmarks). */
  get size(): number {
    return this.held.size;
  }

  private async refresh(): Promise<HeldMempoolTx[]> {
    const listed = await this.rpc.call('getrawmempool', [false]);
    if (!Array.isArray(listed)) throw new ChainError('bad_response', 'Bitcoin Core sent a mempool list that is not a list');
    const txids = listed.map((t) => expectHash(t, 'txid'));
    // Comparing the list with what is held costs milliseconds even on mainnet, and unlike the node's mempool
    // sequence (which starts again when the node restarts) it cannot mistake another mempool for the one held.
    const missing = txids.filter((txid) => !this.held.has(txid));
    if (missing.length === 0 && txids.length === this.held.size) return this.snapshot;
    const fetched = await this.fetch(missing, txids.length);
    const next = new Map<string, HeldMempoolTx>();
    for (const txid of txids) {
      // Absent: mined, replaced or evicted between the list and the fetch.
      const entry = this.held.get(txid) ?? fetched.get(txid);
      if (entry) next.set(txid, entry);
    }
    this.held = next;
    this.snapshot = [...next.values()];
    return this.snapshot;
  }

  /**
   * The transactions and the node's first-seen times of `txids`, in batches; those no longer there are left out.
   * The times come from `getmempoolentry` beside each fetch, or, when most of the mempool is new (the first
   * read), from one `getrawmempool true`: its entries cost the node half of what one `getmempoolentry` each does
   * (bench/sync/mempool-pass.bench.mjs).
   */
  private async fetch(txids: readonly string[], listed: number): Promise<Map<string, HeldMempoolTx>> {
    const times = txids.length * 2 > listed ? await this.allTimes() : undefined;
    const out = new Map<string, HeldMempoolTx>();
    for (let i = 0; i < txids.length; i += this.batchSize) {
      const chunk = times ? txids.slice(i, i + this.batchSize).filter((txid) => times.has(txid)) : txids.slice(i, i + this.batchSize);
      const perTx = times ? 1 : 2;
      const answers = await this.rpc.batch(
        chunk.flatMap((txid) => [
          { method: 'getrawtransaction', params: [txid, false] },
          ...(times ? [] : [{ method: 'getmempoolentry', params: [txid] }]),
        ]),
      );
      chunk.forEach((txid, j) => {
        const raw = answers[perTx * j]!;
        const entry = times ? undefined : answers[perTx * j + 1]!;
        for (const answer of entry ? [raw, entry] : [raw]) {
          if (!answer.ok && !isNotFound(answer.error)) throw answer.error;
        }
        if (!raw.ok || (entry && !entry.ok)) return;
        const time = entry?.ok ? entryTime(entry.result, txid) : times!.get(txid)!;
        out.set(txid, { txid, tx: parseHeld(txid, raw.result), time });
      });
    }
    return out;
  }

  /** The first-seen time of every transaction in the mempool now. */
  private async allTimes(): Promise<Map<string, number>> {
    const answer = expectObject(await this.rpc.call('getrawmempool', [true]), 'getrawmempool');
    const times = new Map<string, number>();
    for (const [txid, entry] of Object.entries(answer)) times.set(txid, entryTime(entry, txid));
    return times;
  }
}

function entryTime(entry: unknown, txid: string): number {
  return expectInteger(expectObject(entry, `mempool entry ${txid}`).time, 'mempool entry time');
}

function parseHeld(txid: string, hex: unknown): BlockTransaction {
  const bytes = expectHexBytes(hex, 'raw transaction');
  let tx: BlockTransaction;
  try {
    tx = parseTransactionForScan(bytes);
  } catch {
    throw new ChainError('bad_response', `Bitcoin Core sent a transaction ${txid} that does not parse`);
  }
  if (tx.txid() !== txid) throw new ChainError('bad_response', `Bitcoin Core sent another transaction when asked for ${txid}`);
  return tx;
}
