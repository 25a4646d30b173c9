import { parseTransaction, txid as transactionId } from '../../core/tx.js';

/**
 * The id of a transaction with its signatures removed: what the PSBT of it is keyed by. Legacy and
 * P2SH inputs put signatures in scriptSig, so the network txid differs from the PSBT's.
 */
export function unsignedTxid(hex: string): string {
  const tx = parseTransaction(hex);
  return transactionId({ ...tx, inputs: tx.inputs.map((i) => ({ ...i, scriptSig: new Uint8Array(0), witness: [] })) });
}
