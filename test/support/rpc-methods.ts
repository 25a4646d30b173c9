/**
 * The chain-source methods of Bitcoin Core's JSON-RPC, answered from the fixture chain with
 * Core's shapes, error codes and messages (as rpc.json recorded them).
 * Not modelled: getblock verbosity 2/3, script `asm`/`desc` fields, signature checks.
 */
import { encodeAddress } from '../../src/core/address.js';
import { NETWORKS } from '../../src/core/network.js';
import { classifyScript } from '../../src/core/script-type.js';
import { serializeTransaction, txid as txidOf, vsize, weight, wtxid as wtxidOf, isCoinbase, type Transaction } from '../../src/core/tx.js';
import { toHex } from '../../src/core/bytes.js';
import { loadFixture } from './fixtures.js';
import { difficulty, expandBits, FixtureChain, RpcFailure, satsToBtcNumber, type MempoolTx, type SubmitResult } from './rpc-fixture-chain.js';

/** What a test can change about the node while it runs. */
export interface NodeBehaviour {
  /** Serve BIP158 filters (a node started with -blockfilterindex). */
  filters: boolean;
  /** Answer every call with RPC error -28 and this text (a node starting up), or null. */
  warmingUp: string | null;
  /** Report initial block download in getblockchaininfo. */
  initialBlockDownload: boolean;
  /** The `chain` name getblockchaininfo reports (main, test, testnet4, signet, regtest). */
  chain: string;
  /** estimatesmartfee answer in BTC/kvB, or null for "Insufficient data or no feerate found". */
  feeRate: number | null;
}

export interface MethodContext {
  chain: FixtureChain;
  behaviour: NodeBehaviour;
  startedAt: number;
  /** Called for every sendrawtransaction, with what the node answered. */
  onBroadcast(hex: string, outcome: { txid: string } | { code: number; message: string }): void;
}

type ParamType = 'number' | 'string' | 'bool' | 'array' | 'number|bool';
interface Param {
  name: string;
  type: ParamType;
  required?: boolean;
}
interface Method {
  params: Param[];
  run(args: unknown[], ctx: MethodContext): unknown;
}

const MIN_RELAY_SAT_PER_KVB = 100n;
const DEFAULT_MAX_FEE_RATE_BTC_PER_KVB = 0.1;
const recorded = loadFixture<{ samples: Array<{ method: string; result?: any }> }>('rpc').samples;
const recordedNetworkInfo = recorded.find((s) => s.method === 'getnetworkinfo')!.result as Record<string, unknown>;

const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v;

/** Core's -3 "Wrong type passed" and -1 usage errors, before a method runs. */
export function checkParams(method: string, spec: Param[], args: unknown[]): unknown[] {
  if (args.length > spec.length) throw new RpcFailure(-1, `${method}: too many parameters (${args.length} > ${spec.length})`);
  const wrong: string[] = [];
  spec.forEach((p, i) => {
    const v = args[i];
    if (v === undefined || v === null) {
      if (p.required) throw new RpcFailure(-1, `${method}: missing required parameter ${p.name}`);
      return;
    }
    const actual = jsonType(v);
    const ok = p.type === 'number|bool' ? actual === 'number' || actual === 'bool' : actual === p.type;
    if (!ok) wrong.push(`    "Position ${i + 1} (${p.name})": "JSON value of type ${actual} is not of expected type ${p.type === 'number|bool' ? 'number' : p.type}"`);
  });
  if (wrong.length > 0) throw new RpcFailure(-3, `Wrong type passed:\n{\n${wrong.join(',\n')}\n}`);
  return args;
}

/** Core's ParseHashV messages. */
function parseHash(value: unknown, name: string): string {
  const text = String(value);
  if (text.length !== 64) throw new RpcFailure(-8, `${name} must be of length 64 (not ${text.length}, for '${text}')`);
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new RpcFailure(-8, `${name} must be hexadecimal string (not '${text}')`);
  return text.toLowerCase();
}

function knownBlock(ctx: MethodContext, hash: string) {
  const b = ctx.chain.block(hash);
  if (!b) throw new RpcFailure(-5, 'Block not found');
  return b;
}

function headerJson(ctx: MethodContext, hash: string) {
  const b = knownBlock(ctx, hash);
  const height = ctx.chain.activeHeightOf(hash);
  const next = height === undefined ? undefined : ctx.chain.hashAt(height + 1);
  return {
    hash,
    confirmations: height === undefined ? -1 : ctx.chain.tipHeight - height + 1,
    height: b.height,
    version: b.header.version,
    versionHex: (b.header.version >>> 0).toString(16).padStart(8, '0'),
    merkleroot: b.header.merkleroot,
    time: b.time,
    mediantime: ctx.chain.medianTime(hash),
    nonce: b.header.nonce,
    bits: b.header.bits,
    target: expandBits(b.header.bits).toString(16).padStart(64, '0'),
    difficulty: difficulty(b.header.bits),
    chainwork: ctx.chain.chainwork(hash),
    nTx: b.txids.length,
    ...(b.prev ? { previousblockhash: b.prev } : {}),
    ...(next ? { nextblockhash: next } : {}),
  };
}

function mempoolEntryJson(ctx: MethodContext, m: MempoolTx) {
  const ancestors = ctx.chain.family(m.txid, 'ancestors');
  const descendants = ctx.chain.family(m.txid, 'descendants');
  const sum = (list: MempoolTx[], f: (t: MempoolTx) => bigint | number) => list.reduce((n, t) => n + BigInt(f(t)), 0n);
  return {
    vsize: m.vsize,
    vsize_bip141: m.vsize,
    weight: m.weight,
    time: m.time,
    height: m.height,
    descendantcount: descendants.length,
    descendantsize: Number(sum(descendants, (t) => t.vsize)),
    ancestorcount: ancestors.length,
    ancestorsize: Number(sum(ancestors, (t) => t.vsize)),
    wtxid: m.wtxid,
    fees: {
      base: satsToBtcNumber(m.feeSat),
      modified: satsToBtcNumber(m.feeSat),
      ancestor: satsToBtcNumber(sum(ancestors, (t) => t.feeSat)),
      descendant: satsToBtcNumber(sum(descendants, (t) => t.feeSat)),
    },
    depends: ctx.chain.parents(m),
    spentby: ctx.chain.children(m.txid),
    unbroadcast: false,
  };
}

function decodedTx(tx: Transaction, hex: string) {
  const network = NETWORKS.regtest;
  return {
    txid: txidOf(tx),
    hash: wtxidOf(tx),
    version: tx.version,
    size: serializeTransaction(tx).length,
    vsize: vsize(tx),
    weight: weight(tx),
    locktime: tx.locktime,
    vin: tx.inputs.map((i) => {
      const witness = i.witness.length > 0 ? { txinwitness: i.witness.map(toHex) } : {};
      return isCoinbase(tx)
        ? { coinbase: toHex(i.scriptSig), ...witness, sequence: i.sequence }
        : { txid: i.txid, vout: i.vout, scriptSig: { hex: toHex(i.scriptSig) }, ...witness, sequence: i.sequence };
    }),
    vout: tx.outputs.map((o, n) => {
      const address = encodeAddress(o.script, network);
      return { value: satsToBtcNumber(o.value), n, scriptPubKey: { hex: toHex(o.script), ...(address ? { address } : {}), type: classifyScript(o.script, network).type } };
    }),
    hex,
  };
}

function verbosity(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  return typeof value === 'boolean' ? (value ? 1 : 0) : (value as number);
}

function broadcastOutcome(result: SubmitResult): string {
  if (!result.accepted) throw new RpcFailure(result.code, result.reason);
  return result.txid;
}

export const METHODS: Record<string, Method> = {
  getblockchaininfo: {
    params: [],
    run: (_args, ctx) => {
      const tip = ctx.chain.tipHash;
      const b = ctx.chain.block(tip)!;
      return {
        chain: ctx.behaviour.chain,
        blocks: ctx.chain.tipHeight,
        headers: ctx.chain.tipHeight,
        bestblockhash: tip,
        bits: b.header.bits,
        target: expandBits(b.header.bits).toString(16).padStart(64, '0'),
        difficulty: difficulty(b.header.bits),
        time: b.time,
        mediantime: ctx.chain.medianTime(tip),
        verificationprogress: ctx.behaviour.initialBlockDownload ? 0.5 : 1,
        initialblockdownload: ctx.behaviour.initialBlockDownload,
        chainwork: ctx.chain.chainwork(tip),
        size_on_disk: [...ctx.chain.blocks.values()].reduce((n, x) => n + x.size, 0),
        pruned: false,
        warnings: [],
      };
    },
  },
  getblockcount: { params: [], run: (_a, ctx) => ctx.chain.tipHeight },
  getbestblockhash: { params: [], run: (_a, ctx) => ctx.chain.tipHash },
  getblockhash: {
    params: [{ name: 'height', type: 'number', required: true }],
    run: ([height], ctx) => {
      const hash = Number.isInteger(height) ? ctx.chain.hashAt(height as number) : undefined;
      if (!hash) throw new RpcFailure(-8, 'Block height out of range');
      return hash;
    },
  },
  getblock: {
    params: [
      { name: 'blockhash', type: 'string', required: true },
      { name: 'verbosity', type: 'number|bool' },
    ],
    run: ([hashArg, verbosityArg], ctx) => {
      const hash = parseHash(hashArg, 'blockhash');
      const b = knownBlock(ctx, hash);
      const level = verbosity(verbosityArg, 1);
      if (level <= 0) return b.hex;
      if (level === 1) return { ...headerJson(ctx, hash), strippedsize: b.strippedSize, size: b.size, weight: b.weight, tx: b.txids };
      throw new RpcFailure(-8, `getblock verbosity ${level} is not served by the test node (use 0 or 1)`);
    },
  },
  getblockheader: {
    params: [
      { name: 'blockhash', type: 'string', required: true },
      { name: 'verbose', type: 'bool' },
    ],
    run: ([hashArg, verbose], ctx) => {
      const hash = parseHash(hashArg, 'hash');
      const b = knownBlock(ctx, hash);
      return verbose === false ? b.hex.slice(0, 160) : headerJson(ctx, hash);
    },
  },
  getblockfilter: {
    params: [
      { name: 'blockhash', type: 'string', required: true },
      { name: 'filtertype', type: 'string' },
    ],
    run: ([hashArg, filterType], ctx) => {
      const hash = parseHash(hashArg, 'blockhash');
      const type = (filterType as string | undefined) ?? 'basic';
      if (type !== 'basic') throw new RpcFailure(-5, 'Unknown filtertype');
      if (!ctx.behaviour.filters) throw new RpcFailure(-1, 'Index is not enabled for filtertype basic');
      const b = knownBlock(ctx, hash);
      return { filter: b.filter, header: b.filterHeader };
    },
  },
  getrawmempool: {
    params: [
      { name: 'verbose', type: 'bool' },
      { name: 'mempool_sequence', type: 'bool' },
    ],
    run: ([verbose], ctx) => {
      const entries = [...ctx.chain.mempool.values()];
      if (verbose !== true) return entries.map((m) => m.txid);
      return Object.fromEntries(entries.map((m) => [m.txid, mempoolEntryJson(ctx, m)]));
    },
  },
  getmempoolentry: {
    params: [{ name: 'txid', type: 'string', required: true }],
    run: ([txidArg], ctx) => {
      const m = ctx.chain.mempool.get(parseHash(txidArg, 'parameter 1'));
      if (!m) throw new RpcFailure(-5, 'Transaction not in mempool');
      return mempoolEntryJson(ctx, m);
    },
  },
  getrawtransaction: {
    params: [
      { name: 'txid', type: 'string', required: true },
      { name: 'verbosity', type: 'number|bool' },
      { name: 'blockhash', type: 'string' },
    ],
    run: ([txidArg, verbosityArg], ctx) => {
      const id = parseHash(txidArg, 'parameter 1');
      const level = verbosity(verbosityArg, 0);
      const inMempool = ctx.chain.mempool.get(id);
      if (inMempool) return level === 0 ? inMempool.hex : decodedTx(inMempool.tx, inMempool.hex);
      const confirmed = ctx.chain.confirmedTx(id);
      if (!confirmed) throw new RpcFailure(-5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
      const hex = toHex(serializeTransaction(confirmed.tx));
      if (level === 0) return hex;
      const b = ctx.chain.block(confirmed.blockHash)!;
      const height = ctx.chain.activeHeightOf(confirmed.blockHash)!;
      return { ...decodedTx(confirmed.tx, hex), blockhash: b.hash, confirmations: ctx.chain.tipHeight - height + 1, time: b.time, blocktime: b.time };
    },
  },
  getmempoolinfo: {
    params: [],
    run: (_a, ctx) => {
      const entries = [...ctx.chain.mempool.values()];
      const minFee = satsToBtcNumber(MIN_RELAY_SAT_PER_KVB);
      return {
        loaded: true,
        size: entries.length,
        bytes: entries.reduce((n, m) => n + m.vsize, 0),
        usage: entries.reduce((n, m) => n + m.hex.length * 4, 0),
        total_fee: satsToBtcNumber(entries.reduce((n, m) => n + m.feeSat, 0n)),
        maxmempool: 300_000_000,
        mempoolminfee: minFee,
        minrelaytxfee: minFee,
        incrementalrelayfee: minFee,
        unbroadcastcount: 0,
        permitbaremultisig: true,
        maxdatacarriersize: 100_000,
      };
    },
  },
  getnetworkinfo: { params: [], run: () => ({ ...recordedNetworkInfo }) },
  estimatesmartfee: {
    params: [
      { name: 'conf_target', type: 'number', required: true },
      { name: 'estimate_mode', type: 'string' },
    ],
    run: ([target, mode], ctx) => {
      const t = target as number;
      if (!Number.isInteger(t) || t < 1 || t > 1008) throw new RpcFailure(-8, 'Invalid conf_target, must be between 1 and 1008');
      if (mode !== undefined && mode !== null && !['unset', 'economical', 'conservative'].includes(String(mode).toLowerCase())) {
        throw new RpcFailure(-8, 'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"');
      }
      if (ctx.behaviour.feeRate === null) return { errors: ['Insufficient data or no feerate found'], blocks: 0 };
      // Core never estimates for the next block alone.
      return { feerate: ctx.behaviour.feeRate, blocks: Math.max(2, t) };
    },
  },
  sendrawtransaction: {
    params: [
      { name: 'hexstring', type: 'string', required: true },
      { name: 'maxfeerate', type: 'number' },
      { name: 'maxburnamount', type: 'number' },
    ],
    run: ([hex, maxFeeRate], ctx) => {
      try {
        const checked = ctx.chain.check(hex as string);
        if (checked.accepted) checkMaxFeeRate(checked, maxFeeRate);
        const txid = broadcastOutcome(ctx.chain.submit(hex as string, Math.floor(Date.now() / 1000)));
        ctx.onBroadcast(hex as string, { txid });
        return txid;
      } catch (error) {
        if (error instanceof RpcFailure) ctx.onBroadcast(hex as string, { code: error.code, message: error.message });
        throw error;
      }
    },
  },
  testmempoolaccept: {
    params: [
      { name: 'rawtxs', type: 'array', required: true },
      { name: 'maxfeerate', type: 'number' },
    ],
    run: ([rawtxs, maxFeeRate], ctx) =>
      (rawtxs as unknown[]).map((hex) => {
        const result = ctx.chain.check(String(hex));
        if (!result.accepted) return { txid: result.txid, wtxid: result.wtxid, allowed: false, 'reject-reason': rejectReason(result.code, result.reason) };
        try {
          checkMaxFeeRate(result, maxFeeRate);
        } catch {
          return { txid: result.txid, wtxid: result.wtxid, allowed: false, 'reject-reason': 'max-fee-exceeded' };
        }
        const feeRate = satsToBtcNumber((result.feeSat * 1000n) / BigInt(result.vsize));
        return {
          txid: result.txid,
          wtxid: result.wtxid,
          allowed: true,
          vsize: result.vsize,
          fees: { base: satsToBtcNumber(result.feeSat), 'effective-feerate': feeRate, 'effective-includes': [result.wtxid] },
        };
      }),
  },
  uptime: { params: [], run: (_a, ctx) => Math.floor((Date.now() - ctx.startedAt) / 1000) },
};

function checkMaxFeeRate(result: Extract<SubmitResult, { accepted: true }>, maxFeeRate: unknown): void {
  const limit = typeof maxFeeRate === 'number' ? maxFeeRate : DEFAULT_MAX_FEE_RATE_BTC_PER_KVB;
  if (limit === 0) return;
  const limitSatPerKvb = BigInt(Math.round(limit * 1e8));
  if (result.feeSat * 1000n > limitSatPerKvb * BigInt(result.vsize)) {
    throw new RpcFailure(-25, 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)');
  }
}

/** testmempoolaccept reports short reject reasons where sendrawtransaction has longer messages. */
function rejectReason(code: number, reason: string): string {
  if (code === -25) return 'missing-inputs';
  if (code === -27) return 'txn-already-known';
  return reason.split(',')[0]!;
}
