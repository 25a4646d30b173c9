/**
 * Sending a signed transaction once, whatever the backend: a refusal becomes the backend's typed ChainError, and an
 * answer lost on the way (timeout, dropped connection) is looked up in the backend, never guessed or sent again.
 */
import { parseTransactionWithTxid } from '../core/tx.js';
import { ChainError } from './types.js';

export interface BroadcastWay {
  /** Sends the hex; resolves with the txid the backend answered. */
  send(txHex: string): Promise<string>;
  /** The typed refusal for a backend's own error answer, or undefined when the error is not a refusal. */
  refusal(error: ChainError): ChainError | undefined;
  /** Whether the backend now knows the transaction (it arrived though the answer did not). */
  knows(txid: string): Promise<boolean>;
}

/** Called with a non-empty hex, once the backend is known to follow the service's network. */
export async function broadcastOnce(txHex: string, way: BroadcastWay): Promise<string> {
  let localTxid: string | undefined;
  try {
    localTxid = parseTransactionWithTxid(txHex).txid;
  } catch {
    localTxid = undefined; // the backend is the judge; its refusal will say why
  }
  try {
    return await way.send(txHex);
  } catch (error) {
    if (!(error instanceof ChainError)) throw error;
    const refusal = way.refusal(error);
    if (refusal) throw refusal;
    if (error.code !== 'timeout' && error.code !== 'unreachable') throw error;
    if (localTxid && (await way.knows(localTxid))) return localTxid;
    throw new ChainError(
      'broadcast_unknown',
      `The broadcast got no answer (${error.message}); the transaction may or may not have been accepted, check before sending it again`,
      { retryable: true },
    );
  }
}
