/**
 * Checking a PSBT creation request: every field read exactly (amounts from their decimal text),
 * every problem a typed ServiceError with the field's path. Nothing here touches the store.
 */
import { decodeAddress, normalizeAddress } from '../../core/address.js';
import { AmountError, MAX_MONEY, parseAmount, type AmountUnit } from '../../core/amount.js';
import { parseFeeRate, type FeeRate } from '../../core/coinselect/index.js';
import { AddressError } from '../../core/errors.js';
import type { Network } from '../../core/network.js';
import { dustThreshold } from '../../core/size.js';
import { ServiceError, invalidField } from '../errors.js';
import { checkLabel } from '../wallet-input.js';

export const MAX_RECIPIENTS = 1000;
export const SEQUENCE_RBF = 0xfffffffd;
export const SEQUENCE_FINAL_LOCKTIME = 0xfffffffe;

/** The creation body as clients send it (JSON). */
export interface CreatePsbtInput {
  recipients?: unknown;
  fee_rate?: unknown;
  rbf?: unknown;
  subtract?: unknown;
  subtract_from?: unknown;
  rbf_tx_id?: unknown;
  inputs?: unknown;
  change_address?: unknown;
  spending_path?: unknown;
  refresh?: unknown;
}

export interface ParsedRecipient {
  address: string;
  script: Uint8Array;
  value: bigint;
  label: string | undefined;
}

export interface ParsedCreateRequest {
  recipients: ParsedRecipient[];
  /** sat/kvB; undefined: estimate from the chain. */
  feeRate: FeeRate | undefined;
  rbf: boolean;
  /** Recipient index paying the fee, when `subtract` is true. */
  subtractFrom: number | undefined;
  /** Transaction being replaced, or undefined. */
  replaces: string | undefined;
  /** Coin control: only these outpoints (`txid:vout`). */
  inputs: { txid: string; vout: number }[] | undefined;
  changeAddress: { address: string; script: Uint8Array } | undefined;
  /** The spending path's id (miniscript wallets); undefined: the primary path. */
  spendingPath: string | undefined;
  /** Spend the coins whose recovery path opens soon back to the wallet (no recipients). */
  refresh: boolean;
}

const TXID = /^[0-9a-f]{64}$/i;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unprocessable(code: string, message: string, path?: string): ServiceError {
  return new ServiceError('unprocessable', code, message, path ? { errors: [{ path, message }] } : {});
}

function readAddress(text: unknown, path: string, network: Network): { address: string; script: Uint8Array } {
  if (typeof text !== 'string' || text.trim() === '') throw invalidField(path, 'must be an address text', 'invalid_address');
  const trimmed = text.trim();
  try {
    const script = decodeAddress(trimmed, network);
    return { address: normalizeAddress(trimmed, network), script };
  } catch (error) {
    if (error instanceof AddressError && error.code === 'wrong_network') {
      throw unprocessable('wrong_network', `${path.slice(1)}: address is not for the ${network.name} network`, path);
    }
    if (error instanceof AddressError) throw invalidField(path, 'is not a valid address', 'invalid_address');
    throw error;
  }
}

function readBoolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw invalidField(path, 'must be a boolean');
}

function readIndex(value: unknown, path: string): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (text === undefined || !/^\d{1,9}$/.test(text)) throw invalidField(path, 'must be a recipient index (0-based integer)');
  return Number(text);
}

function amountError(error: unknown, path: string): ServiceError {
  if (error instanceof AmountError) return invalidField(path, error.message, 'invalid_amount');
  throw error;
}

/** Bounds of an accepted fee rate, sat/kvB. */
export interface FeeRateBounds {
  minimum: FeeRate;
  maximum: FeeRate;
}

/** Checks a fee rate (given or estimated) against the node's minimum relay fee and the configured maximum. */
export function checkFeeRate(rate: FeeRate, bounds: FeeRateBounds): void {
  const show = (r: FeeRate) => `${r / 1000n}${r % 1000n ? '.' + (r % 1000n).toString().padStart(3, '0').replace(/0+$/, '') : ''}`;
  if (rate < bounds.minimum) {
    throw unprocessable('fee_rate_too_low', `fee_rate ${show(rate)} sat/vB is below the minimum relay fee (${show(bounds.minimum)} sat/vB)`, '/fee_rate');
  }
  if (rate > bounds.maximum) {
    throw unprocessable('fee_rate_too_high', `fee_rate ${show(rate)} sat/vB is above the maximum (${show(bounds.maximum)} sat/vB)`, '/fee_rate');
  }
}

function readFeeRate(value: unknown): FeeRate {
  try {
    return parseFeeRate(value);
  } catch (error) {
    throw amountError(error, '/fee_rate');
  }
}

/** Parses and checks the request body. Throws ServiceError (400 malformed, 422 impossible). */
export function parseCreateRequest(body: unknown, network: Network): ParsedCreateRequest {
  if (!isObject(body)) throw invalidField('/', 'body must be a JSON object');
  const input = body as CreatePsbtInput;
  const refresh = readBoolean(input.refresh, '/refresh', false);
  if (refresh) {
    if (input.recipients !== undefined && input.recipients !== null && !(Array.isArray(input.recipients) && input.recipients.length === 0)) {
      throw invalidField('/recipients', 'must be absent with refresh: a refresh pays the wallet itself');
    }
    for (const field of ['inputs', 'rbf_tx_id', 'change_address', 'subtract'] as const) {
      if (input[field] !== undefined && input[field] !== null && input[field] !== '' && input[field] !== false) throw invalidField(`/${field}`, 'must be absent with refresh');
    }
    if (input.spending_path !== undefined && input.spending_path !== null && input.spending_path !== 'primary') throw invalidField('/spending_path', 'a refresh spends by the primary path');
    const feeRate = input.fee_rate !== undefined && input.fee_rate !== null && input.fee_rate !== '' ? readFeeRate(input.fee_rate) : undefined;
    return { recipients: [], feeRate, rbf: readBoolean(input.rbf, '/rbf', true), subtractFrom: 0, replaces: undefined, inputs: undefined, changeAddress: undefined, spendingPath: undefined, refresh };
  }
  if (!Array.isArray(input.recipients)) throw invalidField('/recipients', 'must be a list of recipients');
  if (input.recipients.length < 1 || input.recipients.length > MAX_RECIPIENTS) {
    throw invalidField('/recipients', `must have 1 to ${MAX_RECIPIENTS} entries`);
  }
  // Shape first (400), then what the chain makes impossible (422), so a malformed body never gets a 422.
  const shaped = input.recipients.map((entry: unknown, i) => {
    const path = `/recipients/${i}`;
    if (!isObject(entry)) throw invalidField(path, 'must be an object');
    const unit = entry.unit === undefined || entry.unit === null || entry.unit === '' ? 'btc' : entry.unit;
    if (unit !== 'btc' && unit !== 'sat') throw invalidField(`${path}/unit`, 'must be "btc" or "sat"');
    let value: bigint;
    try {
      value = parseAmount(entry.amount, unit as AmountUnit);
    } catch (error) {
      throw amountError(error, `${path}/amount`);
    }
    if (entry.label !== undefined && entry.label !== null) checkLabel(entry.label, `${path}/label`);
    if (typeof entry.address !== 'string' || entry.address.trim() === '') throw invalidField(`${path}/address`, 'must be an address text', 'invalid_address');
    const label = typeof entry.label === 'string' && entry.label.trim() !== '' ? entry.label : undefined;
    return { path, rawAddress: entry.address, value, label };
  });

  if (shaped.reduce((sum, r) => sum + r.value, 0n) > MAX_MONEY) {
    throw invalidField('/recipients', 'total more than 21 million BTC', 'invalid_amount');
  }

  let feeRate: FeeRate | undefined;
  if (input.fee_rate !== undefined && input.fee_rate !== null && input.fee_rate !== '') feeRate = readFeeRate(input.fee_rate);
  const rbf = readBoolean(input.rbf, '/rbf', true);
  const subtract = readBoolean(input.subtract, '/subtract', false);
  let subtractFrom: number | undefined;
  if (subtract) {
    if (input.subtract_from === undefined || input.subtract_from === null || input.subtract_from === '') {
      throw invalidField('/subtract_from', 'is required when subtract is true');
    }
    subtractFrom = readIndex(input.subtract_from, '/subtract_from');
    if (subtractFrom >= shaped.length) throw invalidField('/subtract_from', `must be a recipient index (0 to ${shaped.length - 1})`);
  }
  let replaces: string | undefined;
  if (input.rbf_tx_id !== undefined && input.rbf_tx_id !== null && input.rbf_tx_id !== '') {
    if (typeof input.rbf_tx_id !== 'string' || !TXID.test(input.rbf_tx_id)) throw invalidField('/rbf_tx_id', 'must be a transaction id (64 hex digits)');
    replaces = input.rbf_tx_id.toLowerCase();
  }
  let inputs: { txid: string; vout: number }[] | undefined;
  if (input.inputs !== undefined && input.inputs !== null) {
    if (!Array.isArray(input.inputs) || input.inputs.length === 0) throw invalidField('/inputs', 'must be a non-empty list of {txid, vout}');
    const seen = new Set<string>();
    inputs = input.inputs.map((o: unknown, i) => {
      if (!isObject(o) || typeof o.txid !== 'string' || !TXID.test(o.txid) || !Number.isInteger(o.vout) || (o.vout as number) < 0 || (o.vout as number) > 0xffffffff) {
        throw invalidField(`/inputs/${i}`, 'must be {"txid": 64 hex digits, "vout": integer}');
      }
      const outpoint = { txid: o.txid.toLowerCase(), vout: o.vout as number };
      const key = `${outpoint.txid}:${outpoint.vout}`;
      if (seen.has(key)) throw invalidField(`/inputs/${i}`, 'lists the same coin twice');
      seen.add(key);
      return outpoint;
    });
  }
  if (input.change_address !== undefined && input.change_address !== null && input.change_address !== '' && typeof input.change_address !== 'string') {
    throw invalidField('/change_address', 'must be an address text', 'invalid_address');
  }

  const recipients = shaped.map((r) => {
    const { address, script } = readAddress(r.rawAddress, `${r.path}/address`, network);
    // With the fee subtracted the final amount is checked again by coin selection.
    const dust = dustThreshold(script);
    if (r.value < dust) {
      throw unprocessable('amount_below_dust', `${r.path.slice(1)}/amount: ${r.value} sat is below the dust limit of this address type (${dust} sat)`, `${r.path}/amount`);
    }
    return { address, script, value: r.value, label: r.label };
  });
  const changeAddress = typeof input.change_address === 'string' && input.change_address !== '' ? readAddress(input.change_address, '/change_address', network) : undefined;
  let spendingPath: string | undefined;
  if (input.spending_path !== undefined && input.spending_path !== null && input.spending_path !== '') {
    if (typeof input.spending_path !== 'string' || !/^[a-z0-9-]{1,32}$/.test(input.spending_path)) throw invalidField('/spending_path', 'must be a spending path id such as "primary" or "recovery-1"');
    spendingPath = input.spending_path;
  }
  return { recipients, feeRate, rbf, subtractFrom, replaces, inputs, changeAddress, spendingPath, refresh: false };
}
