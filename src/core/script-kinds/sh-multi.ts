/** sh(multi|sortedmulti(k,...)): legacy P2SH multisig; signatures and the redeem script in the scriptSig. */
import { p2shScript } from '../address.js';
import { hash160 } from '../script-type.js';
import { DescriptorError } from '../descriptor/errors.js';
import { multisigPath, multisigScriptLength, multisigScriptOf, multisigStack } from './multisig.js';
import { legacySize } from './sizes.js';
import type { ScriptKind } from './types.js';

/** Consensus limit of a pushed P2SH redeem script. */
export const MAX_REDEEM_SCRIPT = 520;

const shMultiKind = (sorted: boolean): ScriptKind => ({
  type: sorted ? 'sh-sortedmulti' : 'sh-multi',
  expressions: ['sh', sorted ? 'sortedmulti' : 'multi'],
  multisig: true,
  maxKeys: 15, // 15 compressed keys fill a 520-byte redeem script
  addressType: 'legacy',
  checkKeys: (keys) => {
    const size = 3 + keys.reduce((n, k) => n + 1 + (k.kind === 'pubkey' ? k.publicKey.length : 33), 0);
    if (size > MAX_REDEEM_SCRIPT) throw new DescriptorError('invalid_descriptor', `P2SH redeem script would be ${size} bytes; at most 520 are allowed`);
  },
  outputScripts: (threshold, keys) => {
    const redeemScript = multisigScriptOf(sorted, threshold, keys);
    if (redeemScript.length > MAX_REDEEM_SCRIPT) throw new DescriptorError('invalid_descriptor', 'P2SH redeem script is larger than 520 bytes');
    return { scriptPubKey: p2shScript(hash160(redeemScript)), redeemScript };
  },
  spendPlan: (k, n) => ({ segwit: false, keyCount: n, paths: [multisigPath(k, n, legacySize(multisigStack(k), multisigScriptLength(k, n)))] }),
});

export const shMulti = shMultiKind(false);
export const shSortedMulti = shMultiKind(true);
