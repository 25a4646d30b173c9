/**
 * Fee rates as integer satoshis per 1000 virtual bytes (sat/kvB, i.e. millisatoshis per vbyte),
 * so fractional sat/vB rates stay exact. Fees round up, as Bitcoin Core's CFeeRate::GetFee does.
 */
import { AmountError, parseScaledDecimal } from '../amount.js';

/** A fee rate in sat/kvB. 1 sat/vB = 1000n. */
export type FeeRate = bigint;

/** Highest rate accepted anywhere in the selection (10,000,000 sat/vB): keeps every fee far inside safe integers. */
export const MAX_FEE_RATE: FeeRate = 10_000_000_000n;

/**
 * Reads a rate in sat/vB (decimal text or JSON number, at most 3 decimals, as Core's `fee_rate`)
 * into sat/kvB exactly. Throws AmountError when malformed, negative, too precise or absurdly high.
 */
export function parseFeeRate(input: unknown): FeeRate {
  const rate = parseScaledDecimal(input, 3, 'Fee rate');
  if (rate > MAX_FEE_RATE) throw new AmountError('amount_too_large', 'Fee rate is more than 10,000,000 sat/vB');
  return rate;
}

/** Fee for `vsize` vbytes at `rate`, rounded up to a whole satoshi. */
export function feeForVsize(rate: FeeRate, vsize: number): bigint {
  return (rate * BigInt(vsize) + 999n) / 1000n;
}

/** fee / vsize in sat/vB as decimal text with two decimals, rounded half up: (1000n, 141) -> "7.09". */
export function formatFeeRate(fee: bigint, vsize: number): string {
  if (vsize <= 0 || fee < 0n) throw new RangeError('fee must be non-negative and vsize positive');
  const hundredths = (fee * 200n + BigInt(vsize)) / (2n * BigInt(vsize));
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
}
