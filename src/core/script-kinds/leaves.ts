/**
 * Scripts inside P2SH or P2WSH whose keys and satisfaction the service knows, tried in order when
 * a PSBT input's output plan is read (script-kinds/output-plan.ts). A kind with another script
 * (miniscript) adds its reader here.
 */
import { parseBareMultisig } from '../script-type.js';
import { kOfN, type SignatureOf, type SignerThreshold } from '../spend-plan.js';
import { multisigStack } from './multisig.js';

export interface ScriptLeaf {
  readonly name: string;
  /** The keys the script names, in script order. */
  readonly keys: readonly Uint8Array[];
  readonly signers: SignerThreshold;
  /** Largest stack lengths of a satisfaction, bottom first, without the script itself. */
  readonly stack: readonly number[];
  /** The satisfying stack from the signatures (by key index), or why they are not enough. */
  satisfy(signatureOf: SignatureOf): Uint8Array[] | string;
}

/** k-of-n CHECKMULTISIG: the first k signatures in key order, after the empty item the extra pop takes (as Core's signer). */
function multisigLeaf(script: Uint8Array): ScriptLeaf | undefined {
  const multisig = parseBareMultisig(script);
  if (!multisig) return undefined;
  const { m, keys } = multisig;
  return {
    name: 'multi',
    keys,
    signers: kOfN(m, keys.length),
    stack: multisigStack(m),
    satisfy: (signatureOf) => {
      const signatures: Uint8Array[] = [];
      keys.forEach((_, i) => {
        const signature = signatureOf(i);
        if (signature && signatures.length < m) signatures.push(signature);
      });
      return signatures.length < m ? `${signatures.length} of ${m} signatures` : [new Uint8Array(0), ...signatures];
    },
  };
}

export const SCRIPT_LEAVES: readonly ((script: Uint8Array) => ScriptLeaf | undefined)[] = [multisigLeaf];
