/**
 * A PSBT decoded the way Bitcoin Core's `decodepsbt` prints it, except that decoded transactions
 * (`tx`, `non_witness_utxo`) carry `reqSigs`/`addresses` (API-DECISIONS) and no `desc`, and
 * `witness_utxo`/v2 output scripts carry `address` as the spec's input table says.
 */
import { base58check as base58checkFactory } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex } from '../bytes.js';
import { decodeTransaction, scriptToAsm, sighashName, type DecodedTransaction } from '../decode.js';
import type { Network } from '../network.js';
import { classifyScript, type ScriptType } from '../script-type.js';
import type { TxOutput } from '../tx.js';
import { PsbtError, type Bip32Derivation, type KeyOrigin, type KeyValue, type Psbt, type PsbtInput, type PsbtOutput, type TaprootBip32Derivation } from './types.js';
import { formatPath } from '../keys/path.js';
import { decodedValueBtc } from '../amount.js';

const base58check = base58checkFactory(sha256);

export interface DecodedAddressScript {
  asm: string;
  hex: string;
  type: ScriptType;
  address?: string;
}

export interface DecodedDerivation {
  pubkey: string;
  master_fingerprint: string;
  path: string;
}

export interface DecodedTaprootDerivation extends DecodedDerivation {
  leaf_hashes: string[];
}

export interface DecodedProprietary {
  identifier: string;
  subtype: number;
  key: string;
  value: string;
}

export interface DecodedPsbtInput {
  witness_utxo?: { amount: number; scriptPubKey: DecodedAddressScript };
  non_witness_utxo?: DecodedTransaction;
  partial_signatures?: Record<string, string>;
  sighash?: string;
  redeem_script?: { asm: string; hex: string; type: ScriptType };
  witness_script?: { asm: string; hex: string; type: ScriptType };
  bip32_derivs?: DecodedDerivation[];
  final_scriptSig?: { asm: string; hex: string };
  final_scriptwitness?: string[];
  ripemd160_preimages?: Record<string, string>;
  sha256_preimages?: Record<string, string>;
  hash160_preimages?: Record<string, string>;
  hash256_preimages?: Record<string, string>;
  previous_txid?: string;
  previous_vout?: number;
  sequence?: number;
  time_locktime?: number;
  height_locktime?: number;
  taproot_key_path_sig?: string;
  taproot_script_path_sigs?: { pubkey: string; leaf_hash: string; sig: string }[];
  taproot_scripts?: { script: string; leaf_ver: number; control_blocks: string[] }[];
  taproot_bip32_derivs?: DecodedTaprootDerivation[];
  taproot_internal_key?: string;
  taproot_merkle_root?: string;
  proprietary?: DecodedProprietary[];
  unknown?: Record<string, string>;
}

export interface DecodedPsbtOutput {
  redeem_script?: { asm: string; hex: string; type: ScriptType };
  witness_script?: { asm: string; hex: string; type: ScriptType };
  bip32_derivs?: DecodedDerivation[];
  amount?: number;
  script?: DecodedAddressScript;
  taproot_internal_key?: string;
  taproot_tree?: { depth: number; leaf_ver: number; script: string }[];
  taproot_bip32_derivs?: DecodedTaprootDerivation[];
  proprietary?: DecodedProprietary[];
  unknown?: Record<string, string>;
}

export interface DecodedPsbt {
  /** The unsigned transaction (assembled from the BIP370 fields for version 2). */
  tx: DecodedTransaction;
  global_xpubs: { xpub: string; master_fingerprint: string; path: string }[];
  tx_version?: number;
  fallback_locktime?: number;
  input_count?: number;
  output_count?: number;
  tx_modifiable?: number;
  psbt_version: number;
  proprietary: DecodedProprietary[];
  unknown: Record<string, string>;
  inputs: DecodedPsbtInput[];
  outputs: DecodedPsbtOutput[];
  /** BTC, present when every input's spent output is known. */
  fee?: number;
}

/** A derivation path as Core writes it: `m/48h/1h/0h/2h/1/0`. */
export { formatPath };

const origin = (o: KeyOrigin) => ({ master_fingerprint: toHex(o.fingerprint), path: formatPath(o.path) });
const derivations = (list: Bip32Derivation[]): DecodedDerivation[] => list.map((d) => ({ pubkey: toHex(d.pubkey), ...origin(d) }));
const tapDerivations = (list: TaprootBip32Derivation[]): DecodedTaprootDerivation[] =>
  list.map((d) => ({ pubkey: toHex(d.pubkey), ...origin(d), leaf_hashes: d.leafHashes.map(toHex) }));

function addressScript(script: Uint8Array, network: Network): DecodedAddressScript {
  const info = classifyScript(script, network);
  const out: DecodedAddressScript = { asm: scriptToAsm(script), hex: toHex(script), type: info.type };
  const address = info.type === 'multisig' || info.type === 'pubkey' ? undefined : info.addresses?.[0];
  if (address) out.address = address;
  return out;
}

const plainScript = (script: Uint8Array, network: Network) => ({
  asm: scriptToAsm(script),
  hex: toHex(script),
  type: classifyScript(script, network).type,
});

function decodeProprietary(list: KeyValue[]): DecodedProprietary[] {
  return list.map(({ key, value }) => {
    // key = 0xfc <compact size identifier length> <identifier> <compact size subtype> <key data>
    let i = 1;
    const readCompact = (): number => {
      const first = key[i++] ?? 0;
      if (first < 0xfd) return first;
      const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
      let n = 0;
      for (let b = width - 1; b >= 0; b--) n = n * 256 + (key[i + b] ?? 0);
      i += width;
      return n;
    };
    const idLength = readCompact();
    const identifier = key.subarray(i, i + idLength);
    i += idLength;
    const subtype = readCompact();
    return { identifier: toHex(identifier), subtype, key: toHex(key.subarray(i)), value: toHex(value) };
  });
}

const unknownMap = (list: KeyValue[]): Record<string, string> => Object.fromEntries(list.map((u) => [toHex(u.key), toHex(u.value)]));

function decodeOtherInputFields(other: KeyValue[], out: DecodedPsbtInput): void {
  const preimageNames: Record<number, 'ripemd160_preimages' | 'sha256_preimages' | 'hash160_preimages' | 'hash256_preimages'> = {
    0x0a: 'ripemd160_preimages',
    0x0b: 'sha256_preimages',
    0x0c: 'hash160_preimages',
    0x0d: 'hash256_preimages',
  };
  for (const { key, value } of other) {
    const type = key[0]!;
    const name = preimageNames[type];
    if (name) (out[name] ??= {})[toHex(key.subarray(1))] = toHex(value);
    else if (type === 0x14) {
      (out.taproot_script_path_sigs ??= []).push({ pubkey: toHex(key.subarray(1, 33)), leaf_hash: toHex(key.subarray(33)), sig: toHex(value) });
    } else if (type === 0x15) {
      const script = toHex(value.subarray(0, value.length - 1));
      const leafVer = value[value.length - 1]!;
      const scripts = (out.taproot_scripts ??= []);
      const existing = scripts.find((s) => s.script === script && s.leaf_ver === leafVer);
      if (existing) existing.control_blocks.push(toHex(key.subarray(1)));
      else scripts.push({ script, leaf_ver: leafVer, control_blocks: [toHex(key.subarray(1))] });
    } else if (type === 0x18) out.taproot_merkle_root = toHex(value);
  }
}

function decodeTaprootTree(value: Uint8Array): { depth: number; leaf_ver: number; script: string }[] {
  const leaves: { depth: number; leaf_ver: number; script: string }[] = [];
  let i = 0;
  while (i + 3 <= value.length) {
    const depth = value[i]!;
    const leafVer = value[i + 1]!;
    let length = value[i + 2]!;
    i += 3;
    if (length >= 0xfd) {
      const width = length === 0xfd ? 2 : length === 0xfe ? 4 : 8;
      length = 0;
      for (let b = width - 1; b >= 0; b--) length = length * 256 + (value[i + b] ?? 0);
      i += width;
    }
    leaves.push({ depth, leaf_ver: leafVer, script: toHex(value.subarray(i, i + length)) });
    i += length;
  }
  return leaves;
}

/** The output an input spends, as Core's GetUTXO finds it (the full previous transaction first). */
export function spentOutput(psbt: Psbt, index: number): TxOutput | undefined {
  const input = psbt.inputs[index]!;
  const vout = psbt.tx.inputs[index]!.vout;
  if (input.nonWitnessUtxo) return input.nonWitnessUtxo.outputs[vout];
  return input.witnessUtxo;
}

/** Every spent output, in input order (for verifying the extracted transaction); PsbtError when one is unknown. */
export function spentOutputs(psbt: Psbt): TxOutput[] {
  return psbt.inputs.map((_, i) => {
    const utxo = spentOutput(psbt, i);
    if (!utxo) throw new PsbtError('missing_utxo', `The output spent by input ${i} is unknown`);
    return utxo;
  });
}

/** The fee in satoshis, or undefined when an input's spent output is unknown. */
export function psbtFee(psbt: Psbt): bigint | undefined {
  let total = 0n;
  for (let i = 0; i < psbt.inputs.length; i++) {
    const utxo = spentOutput(psbt, i);
    if (!utxo) return undefined;
    total += utxo.value;
  }
  return total - psbt.tx.outputs.reduce((n, o) => n + o.value, 0n);
}

function decodeInput(input: PsbtInput, network: Network): DecodedPsbtInput {
  const out: DecodedPsbtInput = {};
  if (input.witnessUtxo) {
    out.witness_utxo = { amount: decodedValueBtc(input.witnessUtxo.value), scriptPubKey: addressScript(input.witnessUtxo.script, network) };
  }
  if (input.nonWitnessUtxo) out.non_witness_utxo = decodeTransaction(input.nonWitnessUtxo, network);
  if (input.partialSigs.length > 0) {
    out.partial_signatures = Object.fromEntries(input.partialSigs.map((s) => [toHex(s.pubkey), toHex(s.signature)]));
  }
  if (input.sighashType !== undefined) out.sighash = sighashName(input.sighashType);
  if (input.redeemScript) out.redeem_script = plainScript(input.redeemScript, network);
  if (input.witnessScript) out.witness_script = plainScript(input.witnessScript, network);
  if (input.bip32Derivations.length > 0) out.bip32_derivs = derivations(input.bip32Derivations);
  if (input.finalScriptSig) out.final_scriptSig = { asm: scriptToAsm(input.finalScriptSig, true), hex: toHex(input.finalScriptSig) };
  if (input.finalScriptWitness) out.final_scriptwitness = input.finalScriptWitness.map(toHex);
  decodeOtherInputFields(input.other, out);
  if (input.previousTxid !== undefined) out.previous_txid = input.previousTxid;
  if (input.outputIndex !== undefined) out.previous_vout = input.outputIndex;
  if (input.sequence !== undefined) out.sequence = input.sequence;
  if (input.requiredTimeLocktime !== undefined) out.time_locktime = input.requiredTimeLocktime;
  if (input.requiredHeightLocktime !== undefined) out.height_locktime = input.requiredHeightLocktime;
  if (input.tapKeySig) out.taproot_key_path_sig = toHex(input.tapKeySig);
  if (input.tapBip32Derivations.length > 0) out.taproot_bip32_derivs = tapDerivations(input.tapBip32Derivations);
  if (input.tapInternalKey) out.taproot_internal_key = toHex(input.tapInternalKey);
  if (input.proprietary.length > 0) out.proprietary = decodeProprietary(input.proprietary);
  if (input.unknown.length > 0) out.unknown = unknownMap(input.unknown);
  return out;
}

function decodeOutput(output: PsbtOutput, network: Network): DecodedPsbtOutput {
  const out: DecodedPsbtOutput = {};
  if (output.redeemScript) out.redeem_script = plainScript(output.redeemScript, network);
  if (output.witnessScript) out.witness_script = plainScript(output.witnessScript, network);
  if (output.bip32Derivations.length > 0) out.bip32_derivs = derivations(output.bip32Derivations);
  if (output.amount !== undefined) out.amount = decodedValueBtc(output.amount);
  if (output.script) out.script = addressScript(output.script, network);
  if (output.tapInternalKey) out.taproot_internal_key = toHex(output.tapInternalKey);
  const tree = output.other.find((o) => o.key[0] === 0x06);
  if (tree) out.taproot_tree = decodeTaprootTree(tree.value);
  if (output.tapBip32Derivations.length > 0) out.taproot_bip32_derivs = tapDerivations(output.tapBip32Derivations);
  if (output.proprietary.length > 0) out.proprietary = decodeProprietary(output.proprietary);
  if (output.unknown.length > 0) out.unknown = unknownMap(output.unknown);
  return out;
}

/** Bitcoin Core's `decodepsbt`, with the member conventions described above. */
export function decodePsbt(psbt: Psbt, network: Network): DecodedPsbt {
  const steps = decodePsbtInSteps(psbt, network);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `decodePsbt` yielding after each input and output, for callers that give way on a PSBT of a thousand inputs. */
export function* decodePsbtInSteps(psbt: Psbt, network: Network): Generator<void, DecodedPsbt> {
  const tx = decodeTransaction(psbt.tx, network);
  yield;
  const inputs: DecodedPsbtInput[] = [];
  for (const input of psbt.inputs) {
    inputs.push(decodeInput(input, network));
    yield;
  }
  const outputs: DecodedPsbtOutput[] = [];
  for (const output of psbt.outputs) {
    outputs.push(decodeOutput(output, network));
    yield;
  }
  const decoded: DecodedPsbt = {
    tx,
    global_xpubs: psbt.xpubs.map((x) => ({ xpub: base58check.encode(x.xpub), ...origin(x) })),
    psbt_version: psbt.version,
    proprietary: decodeProprietary(psbt.proprietary),
    unknown: unknownMap(psbt.unknown),
    inputs,
    outputs,
  };
  if (psbt.version === 2) {
    decoded.tx_version = psbt.tx.version >>> 0;
    if (psbt.fallbackLocktime !== undefined) decoded.fallback_locktime = psbt.fallbackLocktime;
    decoded.input_count = psbt.inputs.length;
    decoded.output_count = psbt.outputs.length;
    if (psbt.txModifiable !== undefined) decoded.tx_modifiable = psbt.txModifiable;
  }
  const fee = psbtFee(psbt);
  if (fee !== undefined) decoded.fee = decodedValueBtc(fee);
  return decoded;
}

