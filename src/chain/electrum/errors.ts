/**
 * A broadcast refused by the Electrum server, as a ChainError with the code Bitcoin Core's source gives the same
 * refusal (rpc-errors.ts): the server passes its node's reason text on, which is all there is to go by.
 */
import { ChainError, type ChainErrorCode } from '../types.js';

const REFUSALS: ReadonlyArray<{ test: RegExp; code: ChainErrorCode; what: string }> = [
  { test: /TX decode failed|decode failed|deserial/i, code: 'tx_decode_failed', what: 'The node could not decode the transaction' },
  { test: /already in (the )?block ?chain|already in utxo set|txn-already-confirmed/i, code: 'tx_already_confirmed', what: 'The transaction is already confirmed' },
  { test: /missingorspent|missing inputs|inputs-missing/i, code: 'tx_missing_inputs', what: 'The transaction spends missing or already spent outputs' },
  // RPC -25 besides missing inputs: above the node's maximum fee rate.
  { test: /max-?fee-?exceeded|exceeds maximum|absurdly-high-fee/i, code: 'tx_failed', what: 'The node did not accept the transaction' },
];

export function broadcastRefusal(error: ChainError): ChainError {
  const reason = (error.reason ?? error.message).trim();
  const known = REFUSALS.find((r) => r.test.test(reason));
  // Anything else is the node's mempool policy or consensus rules (RPC -26): fee too low, non-standard, conflicts.
  const { code, what } = known ?? { code: 'tx_rejected' as const, what: 'The node rejected the transaction' };
  return new ChainError(code, `${what}: ${reason}`, { ...(error.rpcCode !== undefined ? { rpcCode: error.rpcCode } : {}), reason });
}
