/** The facts of PSBT events: who signed (master key fingerprints), how many signatures, the amounts. */
import { toHex } from '../../core/bytes.js';
import { isFinalized, type Psbt } from '../../core/psbt/index.js';
import type { PsbtRecord } from '../psbts/record.js';

/**
 * Fingerprints (hex) of the keys that have signed at least one input, sorted. `finalSigners[i]`: for a finalized
 * input, the hex keys whose signatures its final witness or scriptSig carries (core's `finalSignerKeys`).
 */
export function signerFingerprints(psbt: Psbt, finalSigners: readonly (readonly string[])[]): string[] {
  const signers = new Set<string>();
  for (const [index, input] of psbt.inputs.entries()) {
    if (isFinalized(input)) {
      for (const key of finalSigners[index] ?? []) {
        const origin = input.bip32Derivations.find((d) => toHex(d.pubkey) === key) ?? input.tapBip32Derivations.find((d) => toHex(d.pubkey) === key);
        if (origin) signers.add(toHex(origin.fingerprint));
      }
      continue;
    }
    for (const sig of input.partialSigs) {
      const origin = input.bip32Derivations.find((d) => equalHex(d.pubkey, sig.pubkey));
      if (origin) signers.add(toHex(origin.fingerprint));
    }
    if (input.tapKeySig) {
      const origin = input.tapBip32Derivations.find((d) => d.leafHashes.length === 0);
      if (origin) signers.add(toHex(origin.fingerprint));
    }
  }
  return [...signers].sort();
}

const equalHex = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * What every PSBT event says of the PSBT, so a client needs no second call. A PSBT on a spending path needs
 * that path's threshold, not the wallet's.
 */
export function psbtFacts(txid: string, record: PsbtRecord, walletSigsRequired: number): Record<string, unknown> {
  const sigsRequired = record.sigs_required ?? walletSigsRequired;
  return { txid, fee: record.fee, amount: record.amount, address: record.address, sigs_count: record.sigs_count, sigs_required: sigsRequired };
}
