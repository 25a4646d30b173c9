/** The one path of a single-key kind (pkh, wpkh, sh-wpkh, taproot key path). */
import { oneKey, type SatisfactionSize, type SignatureScheme, type SpendPlan } from '../spend-plan.js';
import { COMPRESSED_PUBKEY, ECDSA_SIGNATURE_MAX } from './sizes.js';

/** Stack of a key-hash spend: signature, then the key. */
export const KEY_HASH_STACK: readonly number[] = [ECDSA_SIGNATURE_MAX, COMPRESSED_PUBKEY];

export const singleKeyPlan = (segwit: boolean, scheme: SignatureScheme, size: SatisfactionSize): SpendPlan => ({
  segwit,
  keyCount: 1,
  paths: [{ name: 'key', signers: oneKey(0), scheme, size }],
});
