/**
 * Exact conversion between decimal amounts (text or JSON numbers) and integer satoshis.
 * Nothing here uses float arithmetic on money: a JS number is only ever read through its
 * shortest decimal form (`String(n)`), and BTC numbers are only ever built from exact text.
 */
import { CoreError } from './errors.js';

export const SATS_PER_BTC = 100_000_000n;
/** 21 million BTC, the most any amount can be (Bitcoin Core's MAX_MONEY). */
export const MAX_MONEY = 21_000_000n * SATS_PER_BTC;

export type AmountUnit = 'btc' | 'sat';

export type AmountErrorCode =
  | 'amount_type'
  | 'amount_empty'
  | 'amount_malformed'
  | 'amount_not_finite'
  | 'amount_too_precise'
  | 'amount_negative'
  | 'amount_zero'
  | 'amount_too_large'
  | 'amount_unit';

/** An amount that is not a valid, exact, in-range number of satoshis. */
export class AmountError extends CoreError {
  declare readonly code: AmountErrorCode;
  constructor(code: AmountErrorCode, message: string) {
    super(code, message);
  }
}

export interface ParseAmountOptions {
  /** Accept 0 (default false: amounts must be positive). */
  allowZero?: boolean;
}

/** Strict decimal grammar (as Bitcoin Core's ParseFixedPoint): no sign but '-', no leading zeros, no bare '.', optional exponent. */
const DECIMAL = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** A decimal number as sign, digits and a power of ten: value = (-1)^negative * digits * 10^exponent. */
interface Decimal {
  negative: boolean;
  digits: bigint;
  exponent: number;
}

function readDecimal(input: unknown, what: string): Decimal {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new AmountError('amount_not_finite', `${what} must be a finite number`);
    text = String(input); // shortest decimal that reads back as this number, e.g. "1e-8"
  } else if (typeof input === 'string') {
    text = input;
  } else {
    throw new AmountError('amount_type', `${what} must be a number or numeric text`);
  }
  if (text.length === 0) throw new AmountError('amount_empty', `${what} is empty`);
  if (text.length > 64) throw new AmountError('amount_malformed', `${what} is too long to be a number`);
  if (/^-?(nan|inf(inity)?)$/i.test(text)) throw new AmountError('amount_not_finite', `${what} must be a finite number`);
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError('amount_malformed', `${what} is not a decimal number: ${JSON.stringify(text)}`);
  const [, sign, whole, fraction = '', exp = '0'] = match;
  const exponent = Number(exp) - fraction.length;
  // Exponents this far out can only describe values that are zero, too small or too large.
  const clamped = Math.max(-1000, Math.min(1000, exponent));
  return { negative: sign === '-', digits: BigInt(whole! + fraction), exponent: clamped };
}

/** Scales a decimal to an integer number of 10^-decimals units, or says why it cannot. */
function toScaledInteger(d: Decimal, decimals: number, what: string, precisionMessage: string): bigint {
  if (d.digits === 0n) return 0n;
  const shift = d.exponent + decimals;
  if (shift >= 0) {
    if (shift > 40) throw new AmountError('amount_too_large', `${what} is too large`);
    return d.digits * 10n ** BigInt(shift);
  }
  const divisor = 10n ** BigInt(-shift);
  if (d.digits % divisor !== 0n) throw new AmountError('amount_too_precise', precisionMessage);
  return d.digits / divisor;
}

/**
 * Parses an amount in `unit` ('btc': at most 8 decimal places; 'sat': whole satoshis) into
 * satoshis. Accepts numeric text or a JSON number (read through its shortest decimal form).
 * Throws AmountError for anything else: empty, malformed, hex, spaces, NaN/Infinity,
 * negative, zero (unless allowed), finer than one satoshi, or over 21 million BTC.
 */
export function parseAmount(input: unknown, unit: AmountUnit = 'btc', options: ParseAmountOptions = {}): bigint {
  if (unit !== 'btc' && unit !== 'sat') throw new AmountError('amount_unit', `Unknown amount unit ${JSON.stringify(unit)}: use btc or sat`);
  const d = readDecimal(input, 'Amount');
  if (d.negative) throw new AmountError('amount_negative', 'Amount must not be negative');
  const sats =
    unit === 'btc'
      ? toScaledInteger(d, 8, 'Amount', 'Amount has more than 8 decimal places (finer than 1 satoshi)')
      : toScaledInteger(d, 0, 'Amount', 'Amount in sat must be a whole number of satoshis');
  if (sats === 0n && !options.allowZero) throw new AmountError('amount_zero', 'Amount must be greater than zero');
  if (sats > MAX_MONEY) throw new AmountError('amount_too_large', 'Amount is more than 21 million BTC');
  return sats;
}

/** parseAmount(input, 'btc'). */
export const parseBtc = (input: unknown, options?: ParseAmountOptions): bigint => parseAmount(input, 'btc', options);

/** parseAmount(input, 'sat'). */
export const parseSats = (input: unknown, options?: ParseAmountOptions): bigint => parseAmount(input, 'sat', options);

/**
 * Parses non-negative decimal text or a JSON number into an integer count of 10^-decimals units,
 * exactly (used for fee rates: sat/vB with 3 decimals is sat/kvB). No range check beyond sign.
 */
export function parseScaledDecimal(input: unknown, decimals: number, what: string): bigint {
  const d = readDecimal(input, what);
  if (d.negative) throw new AmountError('amount_negative', `${what} must not be negative`);
  return toScaledInteger(d, decimals, what, `${what} has more than ${decimals} decimal places`);
}

function checkRange(sats: bigint): void {
  if (sats > MAX_MONEY || sats < -MAX_MONEY) throw new AmountError('amount_too_large', 'Amount is more than 21 million BTC');
}

/** Satoshis as BTC decimal text without trailing zeros: 150000000n -> "1.5", 1n -> "0.00000001", 0n -> "0". */
export function satsToBtcText(sats: bigint): string {
  checkRange(sats);
  const negative = sats < 0n;
  const abs = negative ? -sats : sats;
  const whole = abs / SATS_PER_BTC;
  const fraction = (abs % SATS_PER_BTC).toString().padStart(8, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Satoshis as BTC decimal text with exactly 8 decimals, as Bitcoin Core prints amounts: "1.50000000". */
export function satsToBtcFixed(sats: bigint): string {
  checkRange(sats);
  return fixedBtcText(sats);
}

function fixedBtcText(sats: bigint): string {
  const negative = sats < 0n;
  const abs = negative ? -sats : sats;
  return `${negative ? '-' : ''}${abs / SATS_PER_BTC}.${(abs % SATS_PER_BTC).toString().padStart(8, '0')}`;
}

/**
 * Any transaction output value as a BTC JSON number, the way Core's ValueFromAmount prints it, with no
 * range check: decoding shows what a transaction says, even an impossible amount.
 */
export function decodedValueBtc(sats: bigint): number {
  return Number(fixedBtcText(sats));
}

/**
 * Satoshis as a BTC JSON number. The number is read from exact decimal text; for every amount
 * within ±21 million BTC the double's shortest form (what JSON.stringify writes) is that same
 * decimal, because one satoshi is wider than a double's spacing at that magnitude.
 */
export function satsToBtcNumber(sats: bigint): number {
  return Number(satsToBtcText(sats));
}
