/** Which cosigner has signed which input of a PSBT, read from its record (the contract's decoded shape). */
import type { PsbtRecord } from '../../core/psbt/index.js';

export interface CosignerStatus {
  fingerprint: string;
  label: string;
  /** Inputs carrying this key's collected signature (a finalized input counts only for the keys whose signature it was built from). */
  signedInputs: number;
  inputs: number;
}

type Input = PsbtRecord['inputs'][number];

function signedBy(input: Input, fingerprint: string): boolean {
  const signatures = input.partial_signatures ?? {};
  if ((input.bip32_derivs ?? []).some((d) => d.master_fingerprint === fingerprint && signatures[d.pubkey] !== undefined)) return true;
  const tapDerivs = (input.taproot_bip32_derivs ?? []).filter((d) => d.master_fingerprint === fingerprint);
  if (tapDerivs.length === 0) return false;
  // A key-path signature is the internal key's; script-path signatures name their x-only key.
  if (input.taproot_key_path_sig && tapDerivs.some((d) => d.pubkey === input.taproot_internal_key)) return true;
  return (input.taproot_script_path_sigs ?? []).some((s) => tapDerivs.some((d) => d.pubkey === s.pubkey));
}

export function cosignerStatus(record: PsbtRecord, keys: readonly { fingerprint: string; label: string }[]): CosignerStatus[] {
  return keys.map((k) => ({
    fingerprint: k.fingerprint,
    label: k.label,
    signedInputs: record.inputs.filter((input) => signedBy(input, k.fingerprint)).length,
    inputs: record.inputs.length,
  }));
}
