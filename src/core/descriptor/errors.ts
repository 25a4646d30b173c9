import { CoreError } from '../errors.js';

/**
 * A descriptor or wallet policy that does not parse, fails a BIP380-389 rule, or uses a form
 * the service does not support. Codes: `invalid_descriptor`, `invalid_checksum`, `unsupported`,
 * `private_key`, `invalid_key`, `hardened_derivation`, `invalid_threshold`, `multipath`,
 * `not_ranged`, `invalid_policy`, `invalid_index`.
 */
export class DescriptorError extends CoreError {}
