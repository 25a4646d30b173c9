/**
 * The payments of a wallet's unconfirmed transaction, as a starting point for replacing it with a
 * higher fee (BIP125): the outputs that are not the wallet's own, and the fee rate it paid.
 */
import { encodeAddress } from '../../core/address.js';
import { bytesOfBinary, toHex } from '../../core/bytes.js';
import { getNetwork } from '../../core/network.js';
import { parseTransaction } from '../../core/tx.js';
import { ServiceError } from '../errors.js';
import type { WalletForSpending } from '../wallets/spending.js';

export interface ReplacementDraft {
  txid: string;
  recipients: { address: string; amountSat: bigint }[];
  feeSat: bigint;
  vsize: number;
}

export function replacementDraft(spending: WalletForSpending, txid: string): ReplacementDraft {
  const original = spending.transaction(txid);
  if (!original) throw new ServiceError('not_found', 'transaction_not_found', `Transaction ${txid} is not a transaction of this wallet`);
  if (original.status !== 'mempool') throw new ServiceError('unprocessable', 'transaction_not_pending', `Transaction ${txid} is not waiting in the mempool`);
  if (original.feeSat === null) throw new ServiceError('unprocessable', 'cannot_replace', `Transaction ${txid} spends coins of others; this wallet cannot replace it`);
  const network = getNetwork(spending.wallet.network);
  const recipients = parseTransaction(bytesOfBinary(original.raw))
    .outputs.filter((o) => spending.ownerOfScript(toHex(o.script)) === undefined)
    .map((o) => ({ address: encodeAddress(o.script, network) ?? `script:${toHex(o.script)}`, amountSat: o.value }));
  return { txid, recipients, feeSat: original.feeSat, vsize: original.vsize };
}
