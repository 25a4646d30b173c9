/** tr(KEY): taproot key path only (BIP86); one Schnorr signature in the witness. */
import { singleKeyPlan } from './single-key.js';
import { SCHNORR_SIGNATURE, witnessSize } from './sizes.js';
import type { ScriptKind } from './types.js';

const plan = singleKeyPlan(true, 'schnorr', witnessSize([SCHNORR_SIGNATURE]));

export const tr: ScriptKind = {
  type: 'tr',
  expressions: ['tr'],
  multisig: false,
  maxKeys: 1,
  addressType: 'bech32m',
  // No outputScripts: output keys are tweaked in batches over a range (descriptor/derive.ts).
  spendPlan: () => plan,
};
