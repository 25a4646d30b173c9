/** wpkh(KEY): P2WPKH, signature and key in the witness. */
import { witnessScript } from '../address.js';
import { hash160 } from '../script-type.js';
import { KEY_HASH_STACK, singleKeyPlan } from './single-key.js';
import { witnessSize } from './sizes.js';
import type { ScriptKind } from './types.js';

const plan = singleKeyPlan(true, 'ecdsa', witnessSize(KEY_HASH_STACK));

export const wpkh: ScriptKind = {
  type: 'wpkh',
  expressions: ['wpkh'],
  multisig: false,
  maxKeys: 1,
  addressType: 'bech32',
  outputScripts: (_, [key]) => ({ scriptPubKey: witnessScript(0, hash160(key!)) }),
  spendPlan: () => plan,
};
