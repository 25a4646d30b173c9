/**
 * Writing PSBTs as version 0 (BIP174) in Bitcoin Core's field order, so a PSBT Core wrote is
 * rewritten byte for byte; and as version 2 (BIP370), the same transaction given field by field.
 */
import { base64 } from '@scure/base';
import { concatBytes } from '../bytes.js';
import { hash160 } from '../script-type.js';
import { fromHex } from '../bytes.js';
import { encodeVarint, serializeTransaction, txid, u32le, u64le, type Transaction } from '../tx.js';
import { isFinalized, type Bip32Derivation, type KeyOrigin, type KeyValue, type Psbt, type PsbtInput, type PsbtOutput, type TaprootBip32Derivation } from './types.js';

const MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);


const compareBytes = (a: Uint8Array, b: Uint8Array): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
};

const keyType = (key: Uint8Array): number => key[0]!;
const entry = (type: number, keyData: Uint8Array, value: Uint8Array): KeyValue => ({ key: concatBytes(Uint8Array.of(type), keyData), value });
const originBytes = (o: KeyOrigin) => concatBytes(o.fingerprint, ...o.path.map(u32le));
const varBytes = (b: Uint8Array) => concatBytes(encodeVarint(b.length), b);
const sortedBy = <T>(items: readonly T[], key: (t: T) => Uint8Array): T[] => [...items].sort((a, b) => compareBytes(key(a), key(b)));

function derivationEntries(type: number, derivations: Bip32Derivation[]): KeyValue[] {
  return sortedBy(derivations, (d) => d.pubkey).map((d) => entry(type, d.pubkey, originBytes(d)));
}

function tapDerivationEntries(type: number, derivations: TaprootBip32Derivation[]): KeyValue[] {
  return sortedBy(derivations, (d) => d.pubkey).map((d) =>
    entry(type, d.pubkey, concatBytes(encodeVarint(d.leafHashes.length), ...d.leafHashes, originBytes(d))),
  );
}

/** Stable sort by key type: typed groups are already in Core's order within their type. */
const byType = (entries: KeyValue[]): KeyValue[] =>
  entries.map((e, i) => ({ e, i })).sort((a, b) => keyType(a.e.key) - keyType(b.e.key) || a.i - b.i).map((x) => x.e);

function inputEntries(input: PsbtInput): KeyValue[] {
  const out: KeyValue[] = [];
  const none = new Uint8Array(0);
  if (input.nonWitnessUtxo) out.push(entry(0x00, none, serializeTransaction(input.nonWitnessUtxo)));
  if (input.witnessUtxo) out.push(entry(0x01, none, concatBytes(u64le(input.witnessUtxo.value), varBytes(input.witnessUtxo.script))));
  if (!isFinalized(input)) {
    const group: KeyValue[] = [];
    for (const s of sortedBy(input.partialSigs, (p) => hash160(p.pubkey))) group.push(entry(0x02, s.pubkey, s.signature));
    if (input.sighashType !== undefined) group.push(entry(0x03, none, u32le(input.sighashType)));
    if (input.redeemScript) group.push(entry(0x04, none, input.redeemScript));
    if (input.witnessScript) group.push(entry(0x05, none, input.witnessScript));
    group.push(...derivationEntries(0x06, input.bip32Derivations));
    if (input.tapKeySig) group.push(entry(0x13, none, input.tapKeySig));
    group.push(...tapDerivationEntries(0x16, input.tapBip32Derivations));
    if (input.tapInternalKey) group.push(entry(0x17, none, input.tapInternalKey));
    group.push(...sortedBy(input.other, (o) => o.key));
    out.push(...byType(group));
  }
  if (input.finalScriptSig) out.push(entry(0x07, none, input.finalScriptSig));
  if (input.finalScriptWitness) {
    out.push(entry(0x08, none, concatBytes(encodeVarint(input.finalScriptWitness.length), ...input.finalScriptWitness.map(varBytes))));
  }
  out.push(...sortedBy(input.proprietary, (p) => p.key), ...sortedBy(input.unknown, (u) => u.key));
  return out;
}

function outputEntries(output: PsbtOutput): KeyValue[] {
  const none = new Uint8Array(0);
  const group: KeyValue[] = [];
  if (output.redeemScript) group.push(entry(0x00, none, output.redeemScript));
  if (output.witnessScript) group.push(entry(0x01, none, output.witnessScript));
  group.push(...derivationEntries(0x02, output.bip32Derivations));
  if (output.tapInternalKey) group.push(entry(0x05, none, output.tapInternalKey));
  group.push(...tapDerivationEntries(0x07, output.tapBip32Derivations));
  group.push(...sortedBy(output.other, (o) => o.key));
  return [...byType(group), ...sortedBy(output.proprietary, (p) => p.key), ...sortedBy(output.unknown, (u) => u.key)];
}

function xpubEntries(psbt: Psbt): KeyValue[] {
  const xpubs = [...psbt.xpubs].sort(
    (a, b) => compareBytes(a.fingerprint, b.fingerprint) || comparePaths(a.path, b.path) || compareBytes(a.xpub, b.xpub),
  );
  return xpubs.map((x) => entry(0x01, x.xpub, originBytes(x)));
}

function globalEntries(psbt: Psbt): KeyValue[] {
  const unsigned: Transaction = { ...psbt.tx, inputs: psbt.tx.inputs.map((i) => ({ ...i, scriptSig: new Uint8Array(0), witness: [] })) };
  return [
    entry(0x00, new Uint8Array(0), serializeTransaction(unsigned, { witness: false })),
    ...xpubEntries(psbt),
    ...sortedBy(psbt.proprietary, (p) => p.key),
    ...sortedBy(psbt.unknown, (u) => u.key),
  ];
}

function comparePaths(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function writeMap(entries: KeyValue[]): Uint8Array {
  return concatBytes(...entries.flatMap((e) => [varBytes(e.key), varBytes(e.value)]), Uint8Array.of(0));
}

/**
 * Serialises as a version 0 PSBT (BIP174) in Bitcoin Core's field order. A version 2 PSBT is
 * written as its version 0 equivalent (BIP370-only fields are dropped; the transaction carries them).
 */
export function serializePsbt(psbt: Psbt): Uint8Array {
  return concatBytes(
    MAGIC,
    writeMap(globalEntries(psbt)),
    ...psbt.inputs.map((i) => writeMap(inputEntries(i))),
    ...psbt.outputs.map((o) => writeMap(outputEntries(o))),
  );
}

export const psbtToBase64 = (psbt: Psbt): string => base64.encode(serializePsbt(psbt));

/** The unsigned transaction's id, which names a PSBT (all copies of one PSBT share it). */
export const psbtTxid = (psbt: Psbt): string => txid(psbt.tx);


/** BIP370 input fields: the outpoint, sequence and required locktimes that version 0 keeps in the transaction. */
function v2InputEntries(psbt: Psbt, index: number): KeyValue[] {
  const none = new Uint8Array(0);
  const input = psbt.inputs[index]!;
  const txInput = psbt.tx.inputs[index]!;
  const out = [
    entry(0x0e, none, fromHex(txInput.txid).reverse()),
    entry(0x0f, none, u32le(txInput.vout)),
    entry(0x10, none, u32le(txInput.sequence)),
  ];
  if (input.requiredTimeLocktime !== undefined) out.push(entry(0x11, none, u32le(input.requiredTimeLocktime)));
  if (input.requiredHeightLocktime !== undefined) out.push(entry(0x12, none, u32le(input.requiredHeightLocktime)));
  return out;
}

function v2GlobalEntries(psbt: Psbt): KeyValue[] {
  const none = new Uint8Array(0);
  // A version 0 PSBT's locktime is the fallback; a version 2 one keeps its own fallback (inputs' requirements decide).
  const fallback = psbt.version === 2 ? psbt.fallbackLocktime : psbt.tx.locktime;
  return [
    ...xpubEntries(psbt),
    entry(0x02, none, u32le(psbt.tx.version)),
    ...(fallback !== undefined ? [entry(0x03, none, u32le(fallback))] : []),
    entry(0x04, none, encodeVarint(psbt.inputs.length)),
    entry(0x05, none, encodeVarint(psbt.outputs.length)),
    ...(psbt.txModifiable !== undefined ? [entry(0x06, none, Uint8Array.of(psbt.txModifiable))] : []),
    entry(0xfb, none, u32le(2)),
    ...sortedBy(psbt.proprietary, (p) => p.key),
    ...sortedBy(psbt.unknown, (u) => u.key),
  ];
}

/**
 * Serialises as a version 2 PSBT (BIP370): no unsigned transaction; its version, locktime, outpoints,
 * sequences, amounts and scripts as fields. Parsed again it describes the same transaction (same txid).
 */
export function serializePsbtV2(psbt: Psbt): Uint8Array {
  return concatBytes(
    MAGIC,
    writeMap(v2GlobalEntries(psbt)),
    ...psbt.inputs.map((input, i) => writeMap(byType([...inputEntries(input), ...v2InputEntries(psbt, i)]))),
    ...psbt.outputs.map((output, i) => {
      const txOutput = psbt.tx.outputs[i]!;
      const none = new Uint8Array(0);
      return writeMap(byType([entry(0x03, none, u64le(txOutput.value)), entry(0x04, none, txOutput.script), ...outputEntries(output)]));
    }),
  );
}
