import { CoreError } from '../errors.js';

/**
 * A miniscript that does not parse, is not valid in its context, or is not sane. `code` names
 * the reason (e.g. `malleable`, `no_signature_needed`, `timelock_mix`, `ops_limit`).
 */
export class MiniscriptError extends CoreError {}
