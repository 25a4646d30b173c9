/**
 * The node state the JSON-RPC test server answers from: every block of the regtest fixtures
 * (stale ones included), the active chain and mempool of one timeline snapshot, the UTXO set
 * that follows from them, and transactions submitted since.
 */
import { fromHex, reverseHex } from '../../src/core/bytes.js';
import { parseBlock, parseTransaction, serializeTransaction, txid as txidOf, vsize, weight, wtxid as wtxidOf, type Block, type Transaction } from '../../src/core/tx.js';
import { loadFixture } from './fixtures.js';

export interface FixtureBlock {
  hash: string;
  height: number;
  prev: string | null;
  time: number;
  hex: string;
  filter: string;
  filterHeader: string;
  block: Block;
  /** Txids in block order. */
  txids: string[];
  header: HeaderFields;
  size: number;
  strippedSize: number;
  weight: number;
}

export interface HeaderFields {
  version: number;
  merkleroot: string;
  nonce: number;
  bits: string;
}

export interface MempoolTx {
  txid: string;
  wtxid: string;
  hex: string;
  tx: Transaction;
  feeSat: bigint;
  vsize: number;
  weight: number;
  time: number;
  /** Tip height when it entered the mempool. */
  height: number;
}

export interface Snapshot {
  step: number;
  description: string;
  tip: { height: number; hash: string };
  chain: string[];
  mempool: Array<{ txid: string; hex: string; fee_sat: number; vsize: number; time: number }>;
}

interface Coin {
  value: bigint;
  script: Uint8Array;
}

/** A node error: JSON-RPC code and Bitcoin Core's message. */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type SubmitResult = { accepted: true; txid: string; wtxid: string; vsize: number; feeSat: bigint } | { accepted: false; code: number; reason: string; txid?: string; wtxid?: string };

/** Core 30+ defaults: -minrelaytxfee and -incrementalrelayfee 0.000001 BTC/kvB (0.1 sat/vB). */
const MIN_RELAY_SAT_PER_KVB = 100n;

const u32 = (b: Uint8Array, o: number) => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

function headerFields(header: Uint8Array): HeaderFields {
  return {
    version: u32(header, 0) | 0,
    merkleroot: reverseHex(header.subarray(36, 68)),
    bits: u32(header, 72).toString(16).padStart(8, '0'),
    nonce: u32(header, 76),
  };
}

/** Loads and indexes the fixtures once; tests may share one instance per server. */
export class FixtureChain {
  readonly blocks = new Map<string, FixtureBlock>();
  readonly snapshots: Snapshot[];
  readonly network: string;
  private snapshotIndex = 0;
  private active: string[] = [];
  private activeHeight = new Map<string, number>();
  /** Confirmed transactions of the active chain: txid -> block hash and hex. */
  private confirmed = new Map<string, { blockHash: string; tx: Transaction }>();
  /** Unspent outputs of the active chain (mempool spends and outputs are looked up separately). */
  private utxos = new Map<string, Coin>();
  readonly mempool = new Map<string, MempoolTx>();

  constructor() {
    const blocks = loadFixture<Record<string, { height: number; prev: string | null; time: number; hex: string; filter: string; filter_header: string }>>('blocks');
    for (const [hash, b] of Object.entries(blocks)) {
      const block = parseBlock(b.hex);
      const bytes = fromHex(b.hex);
      const strippedSize = 80 + (bytes.length - 80 - block.transactions.reduce((n, t) => n + serializeTransaction(t).length, 0)) +
        block.transactions.reduce((n, t) => n + serializeTransaction(t, { witness: false }).length, 0);
      this.blocks.set(hash, {
        hash,
        height: b.height,
        prev: b.prev,
        time: b.time,
        hex: b.hex,
        filter: b.filter,
        filterHeader: b.filter_header,
        block,
        txids: block.transactions.map(txidOf),
        header: headerFields(bytes.subarray(0, 80)),
        size: bytes.length,
        strippedSize,
        weight: strippedSize * 3 + bytes.length,
      });
    }
    const timeline = loadFixture<{ network: string; snapshots: Snapshot[] }>('timeline');
    this.snapshots = timeline.snapshots;
    this.network = timeline.network;
    this.setSnapshot(0);
  }

  get snapshot(): number {
    return this.snapshotIndex;
  }

  /** Moves the node to snapshot `i`: its active chain, and its mempool (submitted transactions are dropped). */
  setSnapshot(i: number): void {
    const snap = this.snapshots[i];
    if (!snap) throw new RangeError(`No snapshot ${i} (there are ${this.snapshots.length})`);
    this.snapshotIndex = i;
    this.active = [...snap.chain];
    this.activeHeight = new Map(this.active.map((h, height) => [h, height]));
    this.confirmed.clear();
    this.utxos.clear();
    for (const hash of this.active) {
      const b = this.block(hash)!;
      b.block.transactions.forEach((tx, n) => {
        const id = b.txids[n]!;
        this.confirmed.set(id, { blockHash: hash, tx });
        if (n > 0) for (const input of tx.inputs) this.utxos.delete(`${input.txid}:${input.vout}`);
        tx.outputs.forEach((o, vout) => this.utxos.set(`${id}:${vout}`, { value: o.value, script: o.script }));
      });
    }
    this.mempool.clear();
    const entries = snap.mempool.map((m): MempoolTx => {
      const tx = parseTransaction(m.hex);
      return { txid: m.txid, wtxid: wtxidOf(tx), hex: m.hex, tx, feeSat: BigInt(m.fee_sat), vsize: m.vsize, weight: weight(tx), time: m.time, height: this.tipHeight };
    });
    for (const m of entries) this.mempool.set(m.txid, m);
  }

  get tipHeight(): number {
    return this.active.length - 1;
  }

  get tipHash(): string {
    return this.active[this.active.length - 1]!;
  }

  block(hash: string): FixtureBlock | undefined {
    return this.blocks.get(hash);
  }

  hashAt(height: number): string | undefined {
    return this.active[height];
  }

  /** Height in the active chain, or undefined for a stale block. */
  activeHeightOf(hash: string): number | undefined {
    return this.activeHeight.get(hash);
  }

  /** Median of the last 11 block times up to `hash` (BIP113). */
  medianTime(hash: string): number {
    const times: number[] = [];
    let cursor: FixtureBlock | undefined = this.block(hash);
    while (cursor && times.length < 11) {
      times.push(cursor.time);
      cursor = cursor.prev ? this.block(cursor.prev) : undefined;
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)]!;
  }

  /** Total work up to `hash`, as 64 hex digits. */
  chainwork(hash: string): string {
    let work = 0n;
    let cursor: FixtureBlock | undefined = this.block(hash);
    while (cursor) {
      work += blockWork(cursor.header.bits);
      cursor = cursor.prev ? this.block(cursor.prev) : undefined;
    }
    return work.toString(16).padStart(64, '0');
  }

  confirmedTx(txid: string): { blockHash: string; tx: Transaction } | undefined {
    return this.confirmed.get(txid);
  }

  /** Mempool parents (in-mempool transactions this one spends). */
  parents(m: MempoolTx): string[] {
    return [...new Set(m.tx.inputs.map((i) => i.txid).filter((id) => this.mempool.has(id)))];
  }

  children(txid: string): string[] {
    return [...this.mempool.values()].filter((m) => m.tx.inputs.some((i) => i.txid === txid)).map((m) => m.txid);
  }

  /** `txid` and every in-mempool ancestor (or descendant). */
  family(txid: string, direction: 'ancestors' | 'descendants'): MempoolTx[] {
    const seen = new Set<string>();
    const walk = (id: string) => {
      if (seen.has(id) || !this.mempool.has(id)) return;
      seen.add(id);
      const next = direction === 'ancestors' ? this.parents(this.mempool.get(id)!) : this.children(id);
      next.forEach(walk);
    };
    walk(txid);
    return [...seen].map((id) => this.mempool.get(id)!);
  }

  /** An unspent output of the chain or of a mempool transaction (spent or not by the mempool). */
  private coin(txid: string, vout: number): Coin | undefined {
    const confirmed = this.utxos.get(`${txid}:${vout}`);
    if (confirmed) return confirmed;
    const output = this.mempool.get(txid)?.tx.outputs[vout];
    return output && { value: output.value, script: output.script };
  }

  /** The mempool transaction spending an outpoint, if any. */
  private spender(txid: string, vout: number): MempoolTx | undefined {
    for (const m of this.mempool.values()) if (m.tx.inputs.some((i) => i.txid === txid && i.vout === vout)) return m;
    return undefined;
  }

  /**
   * Bitcoin Core's mempool acceptance, reduced to what the fixtures let us check: the transaction
   * decodes, is not known yet, spends existing outputs, pays at least the minimum relay fee, and
   * replaces conflicting transactions only under the BIP125 fee rules (full RBF, as Core 28+).
   * Signatures and scripts are not verified. Accepted replacements list what they evict.
   */
  check(hex: string): SubmitResult & { evicts?: string[] } {
    let tx: Transaction;
    try {
      tx = parseTransaction(hex);
      if (tx.inputs.length === 0) throw new Error('no inputs');
    } catch {
      throw new RpcFailure(-22, 'TX decode failed. Make sure the tx has at least one input.');
    }
    const id = txidOf(tx);
    const wid = wtxidOf(tx);
    const known = this.mempool.get(id);
    if (known) return { accepted: true, txid: id, wtxid: known.wtxid, vsize: known.vsize, feeSat: known.feeSat };
    const reject = (code: number, reason: string): SubmitResult => ({ accepted: false, code, reason, txid: id, wtxid: wid });
    if (this.confirmed.has(id)) return reject(-27, 'Transaction outputs already in utxo set');
    let valueIn = 0n;
    const conflicts = new Map<string, MempoolTx>();
    for (const input of tx.inputs) {
      const coin = this.coin(input.txid, input.vout);
      if (!coin) return reject(-25, 'bad-txns-inputs-missingorspent');
      const spender = this.spender(input.txid, input.vout);
      if (spender) conflicts.set(spender.txid, spender);
      valueIn += coin.value;
    }
    const valueOut = tx.outputs.reduce((n, o) => n + o.value, 0n);
    if (valueIn < valueOut) return reject(-26, `bad-txns-in-belowout, value in (${formatBtc(valueIn)}) < value out (${formatBtc(valueOut)})`);
    const fee = valueIn - valueOut;
    const size = vsize(tx);
    const required = (BigInt(size) * MIN_RELAY_SAT_PER_KVB + 999n) / 1000n;
    if (fee < required) return reject(-26, `min relay fee not met, ${fee} < ${required}`);
    const accepted = { accepted: true as const, txid: id, wtxid: wid, vsize: size, feeSat: fee };
    if (conflicts.size === 0) return accepted;

    const evicted = new Map<string, MempoolTx>();
    for (const c of conflicts.values()) for (const d of this.family(c.txid, 'descendants')) evicted.set(d.txid, d);
    if (tx.inputs.some((i) => evicted.has(i.txid))) return reject(-26, `bad-txns-spends-conflicting-tx`);
    const rate = (f: bigint, v: number) => `${formatBtc((f * 1000n) / BigInt(v))} BTC/kvB`;
    for (const c of conflicts.values()) {
      if (fee * BigInt(c.vsize) <= c.feeSat * BigInt(size)) {
        return reject(-26, `insufficient fee, rejecting replacement ${id}; new feerate ${rate(fee, size)} <= old feerate ${rate(c.feeSat, c.vsize)}`);
      }
    }
    const evictedFees = [...evicted.values()].reduce((n, m) => n + m.feeSat, 0n);
    if (fee < evictedFees) {
      return reject(-26, `insufficient fee, rejecting replacement ${id}, less fees than conflicting txs; ${formatBtc(fee)} < ${formatBtc(evictedFees)}`);
    }
    const relayForReplacement = (BigInt(size) * MIN_RELAY_SAT_PER_KVB + 999n) / 1000n;
    if (fee - evictedFees < relayForReplacement) {
      return reject(-26, `insufficient fee, rejecting replacement ${id}, not enough additional fees to relay; ${formatBtc(fee - evictedFees)} < ${formatBtc(relayForReplacement)}`);
    }
    return { ...accepted, evicts: [...evicted.keys()] };
  }

  /** Accepts a checked transaction into the mempool, evicting what it replaces. */
  submit(hex: string, now: number): SubmitResult {
    const result = this.check(hex);
    if (result.accepted && !this.mempool.has(result.txid)) {
      for (const txid of result.evicts ?? []) this.mempool.delete(txid);
      const tx = parseTransaction(hex);
      this.mempool.set(result.txid, { txid: result.txid, wtxid: result.wtxid, hex, tx, feeSat: result.feeSat, vsize: result.vsize, weight: weight(tx), time: now, height: this.tipHeight });
    }
    return result;
  }
}

/** Work of one block: 2^256 / (target + 1). */
function blockWork(bits: string): bigint {
  const target = expandBits(bits);
  return (1n << 256n) / (target + 1n);
}

export function expandBits(bits: string): bigint {
  const n = parseInt(bits, 16);
  const exponent = n >>> 24;
  const mantissa = BigInt(n & 0x007fffff);
  return exponent <= 3 ? mantissa >> BigInt(8 * (3 - exponent)) : mantissa << BigInt(8 * (exponent - 3));
}

/** Bitcoin Core's GetDifficulty. */
export function difficulty(bits: string): number {
  const n = parseInt(bits, 16);
  let shift = (n >>> 24) & 0xff;
  let diff = 0x0000ffff / (n & 0x00ffffff);
  while (shift < 29) {
    diff *= 256;
    shift++;
  }
  while (shift > 29) {
    diff /= 256;
    shift--;
  }
  // Core prints doubles with 16 significant digits.
  return Number(diff.toPrecision(16));
}

export const formatBtc = (sats: bigint): string => {
  const whole = sats / 100_000_000n;
  const frac = (sats % 100_000_000n).toString().padStart(8, '0');
  return `${whole}.${frac}`;
};

/** Satoshis as the JSON number Core prints for BTC amounts. */
export const satsToBtcNumber = (sats: bigint): number => Number(formatBtc(sats));
