/** pkh(KEY): P2PKH, signature and key in the scriptSig. */
import { p2pkhScript } from '../address.js';
import { hash160 } from '../script-type.js';
import { KEY_HASH_STACK, singleKeyPlan } from './single-key.js';
import { legacySize } from './sizes.js';
import type { ScriptKind } from './types.js';

const plan = singleKeyPlan(false, 'ecdsa', legacySize(KEY_HASH_STACK));

export const pkh: ScriptKind = {
  type: 'pkh',
  expressions: ['pkh'],
  multisig: false,
  maxKeys: 1,
  addressType: 'legacy',
  outputScripts: (_, [key]) => ({ scriptPubKey: p2pkhScript(hash160(key!)) }),
  spendPlan: () => plan,
};
