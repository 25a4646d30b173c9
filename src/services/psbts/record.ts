/**
 * The PSBT record of the REST API (spec "PSBT record" + API-DECISIONS "PSBT record fields"):
 * the decoded PSBT plus what only the wallet knows (which outputs are change, the estimated
 * signed size, the threshold, the time). Its field names are the API's, so it lives here, not in core.
 */
import { encodeAddress } from '../../core/address.js';
import type { DecodedTransaction } from '../../core/decode.js';
import { decodedValueBtc } from '../../core/amount.js';
import type { Network } from '../../core/network.js';
import { decodePsbtInSteps, minimumSignatureCount, psbtFee, psbtToBase64, PsbtError, type DecodedPsbtInput, type DecodedPsbtOutput, type Psbt } from '../../core/psbt/index.js';
import { formatFeeRate as formatFeeRateText } from '../../core/coinselect/fee-rate.js';
import type { OutputSpendPlan } from '../../core/spend-plan.js';

export interface PsbtRecordOptions {
  network: Network;
  /** Indexes of the outputs that are the wallet's own change (left out of `amount`/`address`). */
  changeOutputs: readonly number[];
  /** Estimated virtual size once fully signed, in vbytes (from the size estimator). */
  fullSizeVbytes: number;
  /** Signatures each input needs. */
  threshold: number;
  /** Seconds since the epoch, with fraction. */
  time: number;
  /** Miniscript wallets: the plans of the inputs (signatures counted toward them) and the path's id. */
  outputPlans?: readonly (OutputSpendPlan | undefined)[];
  spendingPath?: string;
}

export interface PsbtRecord {
  tx: DecodedTransaction;
  unknown: Record<string, string>;
  inputs: DecodedPsbtInput[];
  outputs: DecodedPsbtOutput[];
  fee: number;
  fee_rate: string;
  tx_full_size: number;
  base64: string;
  amount: number[];
  address: string[];
  time: number;
  sigs_count: number;
  spending_path?: string;
  sigs_required?: number;
}

/** fee / size in sat/vB, rounded half up to two decimals, as exact decimal text. */
export function formatFeeRate(feeSats: bigint, vbytes: number): string {
  if (!Number.isInteger(vbytes) || vbytes <= 0) throw new PsbtError('invalid_size', 'The transaction size must be a positive integer');
  return formatFeeRateText(feeSats, vbytes);
}

/** The record of a PSBT. Throws PsbtError when an input's spent output is unknown (no fee can be shown). */
export function psbtRecord(psbt: Psbt, options: PsbtRecordOptions): PsbtRecord {
  const steps = psbtRecordInSteps(psbt, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `psbtRecord` yielding after each input and output decoded; `base64`: the PSBT's base64 when already written out. */
export function* psbtRecordInSteps(psbt: Psbt, options: PsbtRecordOptions, base64?: string): Generator<void, PsbtRecord> {
  const { network, changeOutputs, fullSizeVbytes, threshold, time } = options;
  if (!Number.isInteger(threshold) || threshold < 1) throw new PsbtError('invalid_threshold', 'The threshold must be a positive integer');
  for (const index of changeOutputs) {
    if (!Number.isInteger(index) || index < 0 || index >= psbt.tx.outputs.length) {
      throw new PsbtError('invalid_change_output', `Output ${index} does not exist`);
    }
  }
  const fee = psbtFee(psbt);
  if (fee === undefined) throw new PsbtError('missing_utxo', 'An input does not say which output it spends, so the fee is unknown');
  if (fee < 0n) throw new PsbtError('negative_fee', 'The outputs spend more than the inputs hold');
  const decoded = yield* decodePsbtInSteps(psbt, network);
  const change = new Set(changeOutputs);
  const recipients = psbt.tx.outputs.filter((_, i) => !change.has(i));
  return {
    tx: decoded.tx,
    unknown: decoded.unknown,
    inputs: decoded.inputs,
    outputs: decoded.outputs,
    fee: decodedValueBtc(fee),
    fee_rate: formatFeeRate(fee, fullSizeVbytes),
    tx_full_size: fullSizeVbytes,
    base64: base64 ?? psbtToBase64(psbt),
    amount: recipients.map((o) => decodedValueBtc(o.value)),
    // Outputs without an address form (OP_RETURN) are listed as '' to keep both lists aligned.
    address: recipients.map((o) => encodeAddress(o.script, network) ?? ''),
    time,
    sigs_count: minimumSignatureCount(psbt, threshold, options.outputPlans),
    ...(options.spendingPath !== undefined && { spending_path: options.spendingPath, sigs_required: threshold }),
  };
}
