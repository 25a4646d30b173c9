/** Which cosigner has signed which input of a PSBT, read from its record (the contract's decoded shape). */
import type { PsbtRecord } from '../../services/psbts/record.js';

export interface CosignerStatus {
  fingerprint: string;
  label: string;
  /** Inputs carrying this key's signature: collected, or inside a finalized input's final witness or scriptSig. */
  signedInputs: number;
  inputs: number;
}

type Input = PsbtRecord['inputs'][number];

/** `finalSigners`: for a finalized input, the keys whose signatures its final witness or scriptSig carries. */
function signedBy(input: Input, fingerprint: string, finalSigners: readonly string[]): boolean {
  const derivs = (input.bip32_derivs ?? []).filter((d) => d.master_fingerprint === fingerprint);
  const tapDerivs = (input.taproot_bip32_derivs ?? []).filter((d) => d.master_fingerprint === fingerprint);
  if (finalSigners.length > 0) return [...derivs, ...tapDerivs].some((d) => finalSigners.includes(d.pubkey));
  const signatures = input.partial_signatures ?? {};
  if (derivs.some((d) => signatures[d.pubkey] !== undefined)) return true;
  if (tapDerivs.length === 0) return false;
  // A key-path signature is the internal key's; script-path signatures name their x-only key.
  if (input.taproot_key_path_sig && tapDerivs.some((d) => d.pubkey === input.taproot_internal_key)) return true;
  return (input.taproot_script_path_sigs ?? []).some((s) => tapDerivs.some((d) => d.pubkey === s.pubkey));
}

export function cosignerStatus(record: PsbtRecord, keys: readonly { fingerprint: string; label: string }[], finalSigners: readonly (readonly string[])[] = []): CosignerStatus[] {
  return keys.map((k) => ({
    fingerprint: k.fingerprint,
    label: k.label,
    signedInputs: record.inputs.filter((input, index) => signedBy(input, k.fingerprint, finalSigners[index] ?? [])).length,
    inputs: record.inputs.length,
  }));
}
