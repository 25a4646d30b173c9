/**
 * Building an unsigned PSBT (BIP174 Creator + Updater) from chosen coins and outputs, with every
 * field hardware wallets need: full previous transactions for non-taproot inputs, witness UTXOs,
 * scripts, key origins (BIP32 / taproot), change output details and global xpubs.
 * Every coin is checked against its previous transaction and scripts, so a PSBT never lies about
 * what it spends.
 */
import { base58check as base58checkFactory } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { equalBytes } from '../bytes.js';
import { CoreError } from '../errors.js';
import { OutputPlanError, spendableOutput, type SpendableOutput } from '../script-kinds/output-plan.js';
import { taggedHash } from '../signing/sighash.js';
import { parseTransaction, txid, type Transaction, type TxOutput } from '../tx.js';
import type { OutputSpendPlan } from '../spend-plan.js';
import { PsbtError, emptyInput, emptyOutput, type KeyValue, type Bip32Derivation, type GlobalXpub, type Psbt, type PsbtInput, type PsbtOutput, type TaprootBip32Derivation } from './types.js';

const base58check = base58checkFactory(sha256);
const MAX_MONEY = 21_000_000n * 100_000_000n;

/** A key's origin: master fingerprint (4 bytes) and full derivation path (BIP32 indexes). */
export interface KeyDerivation {
  pubkey: Uint8Array;
  fingerprint: Uint8Array;
  path: number[];
}

export interface TaprootKeyInfo {
  /** 32-byte x-only internal key (BIP86: the derived key itself). */
  internalKey: Uint8Array;
  /** x-only keys with their origins; `leafHashes` empty for key-path-only wallets. */
  derivations: { pubkey: Uint8Array; fingerprint: Uint8Array; path: number[]; leafHashes?: Uint8Array[] }[];
}

export interface BuildInput {
  txid: string;
  vout: number;
  value: bigint;
  scriptPubKey: Uint8Array;
  /** The full previous transaction; required for every non-taproot input. */
  prevTx?: Uint8Array | string;
  redeemScript?: Uint8Array;
  witnessScript?: Uint8Array;
  derivations?: KeyDerivation[];
  taproot?: TaprootKeyInfo;
  /** Overrides the request's sequence for this input. */
  sequence?: number;
  /**
   * The output's plan when the caller knows it (a miniscript output, whose scripts are not read back): the
   * scripts are then taken as given, and its keys' derivations must be there.
   */
  plan?: OutputSpendPlan;
  /** Further input fields kept verbatim (e.g. PSBT_IN_TAP_LEAF_SCRIPT). */
  other?: KeyValue[];
}

export interface BuildOutput {
  script: Uint8Array;
  value: bigint;
  /** For the wallet's own change: how its keys derive, so signers can recognise it. */
  change?: {
    redeemScript?: Uint8Array;
    witnessScript?: Uint8Array;
    derivations?: KeyDerivation[];
    taproot?: TaprootKeyInfo;
    /** As BuildInput's. */
    plan?: OutputSpendPlan;
  };
}

export interface BuildPsbtRequest {
  inputs: BuildInput[];
  outputs: BuildOutput[];
  /** Transaction version (default 2). */
  version?: number;
  locktime?: number;
  /** Default nSequence of every input (default 0xfffffffd: replaceable). */
  sequence?: number;
  /** PSBT_GLOBAL_XPUB entries (multisig wallets): account xpub (base58 or 78 bytes) with its origin. */
  globalXpubs?: { xpub: string | Uint8Array; fingerprint: Uint8Array; path: number[] }[];
}

const invalid = (message: string, code = 'invalid_build_request'): never => {
  throw new PsbtError(code, message);
};

const isUint32 = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 0xffffffff;

function checkOrigin(d: { fingerprint: Uint8Array; path: number[] }, what: string): void {
  if (!(d.fingerprint instanceof Uint8Array) || d.fingerprint.length !== 4) invalid(`${what}: fingerprint must be 4 bytes`);
  if (!Array.isArray(d.path) || !d.path.every(isUint32)) invalid(`${what}: invalid derivation path`);
}

function derivationsOf(list: KeyDerivation[] | undefined, what: string): Bip32Derivation[] {
  return (list ?? []).map((d) => {
    checkOrigin(d, what);
    if (!(d.pubkey instanceof Uint8Array) || (d.pubkey.length !== 33 && d.pubkey.length !== 65)) invalid(`${what}: invalid public key`);
    return { pubkey: d.pubkey, fingerprint: d.fingerprint, path: [...d.path] };
  });
}

function taprootOf(info: TaprootKeyInfo, what: string): { internalKey: Uint8Array; derivations: TaprootBip32Derivation[] } {
  if (!(info.internalKey instanceof Uint8Array) || info.internalKey.length !== 32) invalid(`${what}: taproot internal key must be 32 bytes`);
  const derivations = info.derivations.map((d) => {
    checkOrigin(d, what);
    if (!(d.pubkey instanceof Uint8Array) || d.pubkey.length !== 32) invalid(`${what}: taproot keys must be 32-byte x-only keys`);
    return { pubkey: d.pubkey, fingerprint: d.fingerprint, path: [...d.path], leafHashes: d.leafHashes ?? [] };
  });
  return { internalKey: info.internalKey, derivations };
}

/** BIP341/BIP86 output key of an internal key without a script tree. */
export function taprootOutputKey(internalKey: Uint8Array): Uint8Array {
  const point = secp256k1.Point.fromBytes(Uint8Array.of(0x02, ...internalKey));
  const tweak = BigInt('0x' + Array.from(taggedHash('TapTweak', internalKey), (b) => b.toString(16).padStart(2, '0')).join(''));
  if (tweak >= secp256k1.Point.CURVE().n) throw new CoreError('invalid_key', 'Taproot tweak out of range');
  return point.add(secp256k1.Point.BASE.multiply(tweak)).toBytes(true).subarray(1);
}

/**
 * Checks the scripts and keys given for a coin against its output's spend plan: whether it is
 * segwit, and whether its signatures are Schnorr (taproot: no previous transaction needed).
 */
function checkScripts(
  what: string,
  spk: Uint8Array,
  scripts: { redeemScript?: Uint8Array; witnessScript?: Uint8Array; derivations: Bip32Derivation[]; taproot?: TaprootKeyInfo; plan?: OutputSpendPlan },
): { segwit: boolean; taproot: boolean } {
  if (scripts.plan) {
    const taproot = scripts.plan.paths.some((p) => p.scheme === 'schnorr');
    if (taproot ? !scripts.taproot : !scripts.witnessScript) invalid(`${what}: the scripts of the known plan are missing`);
    return { segwit: scripts.plan.segwit, taproot };
  }
  const input: PsbtInput = { ...emptyInput(), bip32Derivations: scripts.derivations };
  if (scripts.redeemScript) input.redeemScript = scripts.redeemScript;
  if (scripts.witnessScript) input.witnessScript = scripts.witnessScript;
  let output: SpendableOutput | undefined;
  try {
    output = spendableOutput(input, { value: 0n, script: spk });
  } catch (e) {
    if (e instanceof OutputPlanError) invalid(`${what}: ${e.message.replace('the spent output', 'the script')}`);
    throw e;
  }
  if (!output) return invalid(`${what}: unsupported script type`);
  const { plan } = output;
  if (!output.ecdsa) {
    checkTaprootKey(what, spk, scripts.taproot);
    return { segwit: true, taproot: true };
  }
  if (plan.keys.length === 0) invalid(`${what}: no derivation for the key of the script`);
  for (const key of plan.keys) {
    if (!scripts.derivations.some((d) => equalBytes(d.pubkey, key))) invalid(`${what}: no derivation for a key of the script`);
  }
  return { segwit: plan.segwit, taproot: false };
}

/** A taproot key path output: the internal key given must tweak to the output key. */
function checkTaprootKey(what: string, spk: Uint8Array, info: TaprootKeyInfo | undefined): void {
  const taproot = info ?? invalid(`${what}: taproot key information is missing`);
  let outputKey: Uint8Array;
  try {
    outputKey = taprootOutputKey(taproot.internalKey);
  } catch {
    return invalid(`${what}: the taproot internal key is not a valid key`);
  }
  if (!equalBytes(outputKey, spk.subarray(2))) invalid(`${what}: the taproot internal key does not match the script`);
}

function buildInput(coin: BuildInput, index: number): PsbtInput {
  const what = `input ${index}`;
  if (typeof coin.txid !== 'string' || !/^[0-9a-f]{64}$/.test(coin.txid)) invalid(`${what}: txid must be 64 lower-case hex characters`);
  if (!isUint32(coin.vout)) invalid(`${what}: invalid output index`);
  if (typeof coin.value !== 'bigint' || coin.value <= 0n || coin.value > MAX_MONEY) invalid(`${what}: invalid amount`);
  const derivations = derivationsOf(coin.derivations, what);
  const kind = checkScripts(what, coin.scriptPubKey, { ...coin, derivations });
  const input = emptyInput();
  if (!kind.taproot) {
    if (coin.prevTx === undefined) invalid(`${what}: the previous transaction is required`, 'missing_previous_transaction');
    let prev: Transaction;
    try {
      prev = parseTransaction(coin.prevTx!);
    } catch (e) {
      return invalid(`${what}: previous transaction does not parse: ${(e as Error).message}`);
    }
    if (txid(prev) !== coin.txid) invalid(`${what}: previous transaction is not ${coin.txid}`, 'utxo_mismatch');
    const spent = prev.outputs[coin.vout] ?? invalid(`${what}: previous transaction has no output ${coin.vout}`, 'utxo_mismatch');
    if (spent.value !== coin.value || !equalBytes(spent.script, coin.scriptPubKey)) {
      invalid(`${what}: amount or script differs from the previous transaction`, 'utxo_mismatch');
    }
    input.nonWitnessUtxo = prev;
  }
  if (kind.segwit) input.witnessUtxo = { value: coin.value, script: coin.scriptPubKey };
  if (coin.redeemScript) input.redeemScript = coin.redeemScript;
  if (coin.witnessScript) input.witnessScript = coin.witnessScript;
  if (kind.taproot) {
    const taproot = taprootOf(coin.taproot!, what);
    input.tapInternalKey = taproot.internalKey;
    input.tapBip32Derivations = taproot.derivations;
  } else {
    input.bip32Derivations = derivations;
  }
  if (coin.other) input.other = [...coin.other];
  return input;
}

function buildOutput(output: BuildOutput, index: number): PsbtOutput {
  const what = `output ${index}`;
  if (!(output.script instanceof Uint8Array) || output.script.length === 0) invalid(`${what}: script is missing`);
  if (typeof output.value !== 'bigint' || output.value < 0n || output.value > MAX_MONEY) invalid(`${what}: invalid amount`);
  const out = emptyOutput();
  const change = output.change;
  if (!change) return out;
  const derivations = derivationsOf(change.derivations, what);
  const kind = checkScripts(what, output.script, { ...change, derivations });
  if (change.redeemScript) out.redeemScript = change.redeemScript;
  if (change.witnessScript) out.witnessScript = change.witnessScript;
  if (kind.taproot) {
    const taproot = taprootOf(change.taproot!, what);
    out.tapInternalKey = taproot.internalKey;
    out.tapBip32Derivations = taproot.derivations;
  } else out.bip32Derivations = derivations;
  return out;
}

function globalXpub(entry: { xpub: string | Uint8Array; fingerprint: Uint8Array; path: number[] }): GlobalXpub {
  let bytes: Uint8Array;
  try {
    bytes = typeof entry.xpub === 'string' ? base58check.decode(entry.xpub) : entry.xpub;
  } catch {
    return invalid('global xpub: not a base58check extended key');
  }
  if (bytes.length !== 78) invalid('global xpub: must be 78 bytes');
  checkOrigin(entry, 'global xpub');
  if (bytes[4] !== entry.path.length) invalid('global xpub: path length differs from the key depth');
  return { xpub: Uint8Array.from(bytes), fingerprint: entry.fingerprint, path: [...entry.path] };
}

/** Builds an unsigned version 0 PSBT; any inconsistency throws PsbtError. */
export function buildPsbt(request: BuildPsbtRequest): Psbt {
  const version = request.version ?? 2;
  const locktime = request.locktime ?? 0;
  const sequence = request.sequence ?? 0xfffffffd;
  if (!Number.isInteger(version) || version < 1 || version > 3) invalid('transaction version must be 1, 2 or 3');
  if (!isUint32(locktime)) invalid('invalid locktime');
  if (!isUint32(sequence)) invalid('invalid sequence');
  if (request.inputs.length === 0) invalid('at least one input is required');
  if (request.outputs.length === 0) invalid('at least one output is required');
  const outpoints = new Set(request.inputs.map((i) => `${i.txid}:${i.vout}`));
  if (outpoints.size !== request.inputs.length) invalid('the same coin is spent twice');
  const inputs = request.inputs.map(buildInput);
  const outputs = request.outputs.map(buildOutput);
  const tx: Transaction = {
    version,
    locktime,
    inputs: request.inputs.map((i) => {
      if (i.sequence !== undefined && !isUint32(i.sequence)) invalid('invalid input sequence');
      return { txid: i.txid, vout: i.vout, scriptSig: new Uint8Array(0), sequence: i.sequence ?? sequence, witness: [] };
    }),
    outputs: request.outputs.map((o): TxOutput => ({ value: o.value, script: o.script })),
  };
  const inTotal = request.inputs.reduce((n, i) => n + i.value, 0n);
  const outTotal = request.outputs.reduce((n, o) => n + o.value, 0n);
  if (outTotal > inTotal) invalid('outputs spend more than the inputs hold', 'insufficient_funds');
  return { version: 0, tx, xpubs: (request.globalXpubs ?? []).map(globalXpub), inputs, outputs, proprietary: [], unknown: [] };
}
