/** wsh(multi(k,...)) and wsh(sortedmulti(k,...)): P2WSH of a CHECKMULTISIG script. */
import { sha256 } from '@noble/hashes/sha2.js';
import { witnessScript } from '../address.js';
import { multisigPath, multisigScriptLength, multisigScriptOf, multisigStack } from './multisig.js';
import { witnessSize } from './sizes.js';
import type { ScriptKind } from './types.js';

const wshMultiKind = (sorted: boolean): ScriptKind => ({
  type: sorted ? 'wsh-sortedmulti' : 'wsh-multi',
  expressions: ['wsh', sorted ? 'sortedmulti' : 'multi'],
  multisig: true,
  maxKeys: 20,
  addressType: 'bech32',
  outputScripts: (threshold, keys) => {
    const ws = multisigScriptOf(sorted, threshold, keys);
    return { scriptPubKey: witnessScript(0, sha256(ws)), witnessScript: ws };
  },
  spendPlan: (k, n) => ({ segwit: true, keyCount: n, paths: [multisigPath(k, n, witnessSize(multisigStack(k), multisigScriptLength(k, n)))] }),
});

export const wshMulti = wshMultiKind(false);
export const wshSortedMulti = wshMultiKind(true);
