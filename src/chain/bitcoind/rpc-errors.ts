/** Bitcoin Core RPC error codes the chain source gives a meaning to (src/rpc/protocol.h). */
import { ChainError } from '../types.js';

export const RPC_MISC_ERROR = -1;
export const RPC_INVALID_ADDRESS_OR_KEY = -5;
export const RPC_INVALID_PARAMETER = -8;
export const RPC_DESERIALIZATION_ERROR = -22;
export const RPC_VERIFY_ERROR = -25;
export const RPC_VERIFY_REJECTED = -26;
export const RPC_VERIFY_ALREADY_IN_CHAIN = -27;

const isRpc = (error: unknown, code: number): error is ChainError => error instanceof ChainError && error.rpcCode === code;

/** Unknown block, transaction (-5) or height out of range (-8). */
export const isNotFound = (error: unknown): error is ChainError =>
  isRpc(error, RPC_INVALID_ADDRESS_OR_KEY) || isRpc(error, RPC_INVALID_PARAMETER);

/**
 * The node keeps no usable basic filter: the index is off ("Index is not enabled for filtertype
 * basic") or has not reached the block yet ("... still in the process of being indexed").
 */
export const isFilterUnavailable = (error: unknown): boolean =>
  isRpc(error, RPC_MISC_ERROR) && /index is not enabled|being indexed|filter not found/i.test(error.reason ?? '');

/** The node's answer to sendrawtransaction as a typed error carrying its reason text. */
export function broadcastError(error: ChainError): ChainError {
  const reason = error.reason ?? error.message;
  const make = (code: ConstructorParameters<typeof ChainError>[0], what: string) =>
    new ChainError(code, `${what}: ${reason}`, { rpcCode: error.rpcCode, reason });
  switch (error.rpcCode) {
    case RPC_DESERIALIZATION_ERROR:
      return make('tx_decode_failed', 'The node could not decode the transaction');
    case RPC_VERIFY_REJECTED:
      return make('tx_rejected', 'The node rejected the transaction');
    case RPC_VERIFY_ALREADY_IN_CHAIN:
      return make('tx_already_confirmed', 'The transaction is already confirmed');
    case RPC_VERIFY_ERROR:
      return /missingorspent|missing inputs/i.test(reason)
        ? make('tx_missing_inputs', 'The transaction spends missing or already spent outputs')
        : make('tx_failed', 'The node did not accept the transaction');
    default:
      return error;
  }
}
