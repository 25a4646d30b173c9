/** sh(wsh(multi|sortedmulti(k,...))): P2WSH multisig inside P2SH; the scriptSig pushes the witness program. */
import { sha256 } from '@noble/hashes/sha2.js';
import { p2shScript, witnessScript } from '../address.js';
import { hash160 } from '../script-type.js';
import { multisigPath, multisigScriptLength, multisigScriptOf, multisigStack } from './multisig.js';
import { NESTED_P2WSH, witnessSize } from './sizes.js';
import type { ScriptKind } from './types.js';

const shWshMultiKind = (sorted: boolean): ScriptKind => ({
  type: sorted ? 'sh-wsh-sortedmulti' : 'sh-wsh-multi',
  expressions: ['sh', 'wsh', sorted ? 'sortedmulti' : 'multi'],
  multisig: true,
  maxKeys: 20,
  addressType: 'p2sh-segwit',
  outputScripts: (threshold, keys) => {
    const ws = multisigScriptOf(sorted, threshold, keys);
    const redeemScript = witnessScript(0, sha256(ws));
    return { scriptPubKey: p2shScript(hash160(redeemScript)), redeemScript, witnessScript: ws };
  },
  spendPlan: (k, n) => ({
    segwit: true,
    keyCount: n,
    paths: [multisigPath(k, n, witnessSize(multisigStack(k), multisigScriptLength(k, n), NESTED_P2WSH))],
  }),
});

export const shWshMulti = shWshMultiKind(false);
export const shWshSortedMulti = shWshMultiKind(true);
