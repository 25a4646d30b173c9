/**
 * The in-memory model of a PSBT (BIP174 version 0, BIP370 version 2). Every field Bitcoin Core
 * models is typed; everything else is kept as raw key/value pairs so that nothing is lost.
 */
import { CoreError } from '../errors.js';
import type { Transaction, TxOutput } from '../tx.js';

/** Any PSBT that cannot be parsed, combined, finalized or built; `code` says why. */
export class PsbtError extends CoreError {}

export interface KeyValue {
  key: Uint8Array;
  value: Uint8Array;
}

export interface KeyOrigin {
  /** 4-byte master key fingerprint. */
  fingerprint: Uint8Array;
  /** Derivation path as BIP32 indexes (hardened ones have bit 31 set). */
  path: number[];
}

export interface Bip32Derivation extends KeyOrigin {
  pubkey: Uint8Array;
}

export interface TaprootBip32Derivation extends KeyOrigin {
  /** 32-byte x-only public key. */
  pubkey: Uint8Array;
  leafHashes: Uint8Array[];
}

export interface GlobalXpub extends KeyOrigin {
  /** 78-byte BIP32 serialisation. */
  xpub: Uint8Array;
}

export interface PartialSignature {
  pubkey: Uint8Array;
  signature: Uint8Array;
}

export interface PsbtInput {
  nonWitnessUtxo?: Transaction;
  witnessUtxo?: TxOutput;
  partialSigs: PartialSignature[];
  sighashType?: number;
  redeemScript?: Uint8Array;
  witnessScript?: Uint8Array;
  bip32Derivations: Bip32Derivation[];
  finalScriptSig?: Uint8Array;
  finalScriptWitness?: Uint8Array[];
  tapKeySig?: Uint8Array;
  tapBip32Derivations: TaprootBip32Derivation[];
  tapInternalKey?: Uint8Array;
  /** Fields Core understands that this model keeps verbatim (preimages, taproot script paths, MuSig2). */
  other: KeyValue[];
  /** BIP370 (version 2 only). */
  previousTxid?: string;
  outputIndex?: number;
  sequence?: number;
  requiredTimeLocktime?: number;
  requiredHeightLocktime?: number;
  proprietary: KeyValue[];
  unknown: KeyValue[];
}

export interface PsbtOutput {
  redeemScript?: Uint8Array;
  witnessScript?: Uint8Array;
  bip32Derivations: Bip32Derivation[];
  tapInternalKey?: Uint8Array;
  tapBip32Derivations: TaprootBip32Derivation[];
  /** Taproot tree and MuSig2 participants, kept verbatim. */
  other: KeyValue[];
  /** BIP370 (version 2 only). */
  amount?: bigint;
  script?: Uint8Array;
  proprietary: KeyValue[];
  unknown: KeyValue[];
}

export interface Psbt {
  version: 0 | 2;
  /**
   * The unsigned transaction: version 0 carries it; for version 2 it is assembled from the
   * per-input and per-output fields (BIP370), so both versions are handled alike.
   */
  tx: Transaction;
  xpubs: GlobalXpub[];
  /** BIP370 globals, present for version 2 only. */
  fallbackLocktime?: number;
  txModifiable?: number;
  inputs: PsbtInput[];
  outputs: PsbtOutput[];
  proprietary: KeyValue[];
  unknown: KeyValue[];
}

export const emptyInput = (): PsbtInput => ({
  partialSigs: [],
  bip32Derivations: [],
  tapBip32Derivations: [],
  other: [],
  proprietary: [],
  unknown: [],
});

export const emptyOutput = (): PsbtOutput => ({ bip32Derivations: [], tapBip32Derivations: [], other: [], proprietary: [], unknown: [] });

export const isFinalized = (input: PsbtInput): boolean => input.finalScriptSig !== undefined || input.finalScriptWitness !== undefined;
