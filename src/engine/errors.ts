import { CoreError } from '../core/errors.js';

/**
 * An update or stored row the engine cannot apply: codes `tip_mismatch` (a block that does not extend, or
 * is not, the wallet's tip), `unknown_wallet`, `duplicate_wallet`, `invalid_update`, `invalid_stored_state`.
 */
export class EngineError extends CoreError {}
