/** sh(wpkh(KEY)): P2WPKH inside P2SH; the scriptSig pushes the witness program. */
import { p2shScript, witnessScript } from '../address.js';
import { hash160 } from '../script-type.js';
import { KEY_HASH_STACK, singleKeyPlan } from './single-key.js';
import { NESTED_P2WPKH, witnessSize } from './sizes.js';
import type { ScriptKind } from './types.js';

const plan = singleKeyPlan(true, 'ecdsa', witnessSize(KEY_HASH_STACK, undefined, NESTED_P2WPKH));

export const shWpkh: ScriptKind = {
  type: 'sh-wpkh',
  expressions: ['sh', 'wpkh'],
  multisig: false,
  maxKeys: 1,
  addressType: 'p2sh-segwit',
  outputScripts: (_, [key]) => {
    const redeemScript = witnessScript(0, hash160(key!));
    return { scriptPubKey: p2shScript(hash160(redeemScript)), redeemScript };
  },
  spendPlan: () => plan,
};
