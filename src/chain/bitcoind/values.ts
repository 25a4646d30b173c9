/** Checks and conversions of the values Bitcoin Core puts in its JSON answers. */
import { ChainError } from '../types.js';

const MAX_MONEY_BTC = 21_000_000;

/**
 * A BTC amount as Core prints it (a JSON number with at most 8 decimals) in integer satoshis.
 * Rounding to the nearest satoshi is exact: a double's error at these magnitudes is far below 0.5 sat.
 */
export function btcToSats(value: unknown, what: string): bigint {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_MONEY_BTC) {
    throw new ChainError('bad_response', `Bitcoin Core sent an invalid amount for ${what}`);
  }
  return BigInt(Math.round(value * 1e8));
}

/** A fee rate in BTC/kvB (Core's unit) as integer sat/kvB. */
export function btcPerKvbToSatPerKvb(value: unknown, what: string): number {
  return Number(btcToSats(value, what));
}

export function expectObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ChainError('bad_response', `Bitcoin Core sent an unexpected answer for ${what}`);
  }
  return value as Record<string, unknown>;
}

export function expectString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ChainError('bad_response', `Bitcoin Core sent an unexpected ${what}`);
  return value;
}

export function expectInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new ChainError('bad_response', `Bitcoin Core sent an unexpected ${what}`);
  return value;
}

const HASH = /^[0-9a-f]{64}$/;

export function expectHash(value: unknown, what: string): string {
  if (typeof value !== 'string' || !HASH.test(value)) throw new ChainError('bad_response', `Bitcoin Core sent an invalid ${what}`);
  return value;
}

/** Validates a hash given by the caller (block hash or txid) before it goes to the node. */
export function checkHashArgument(value: string, what: string): string {
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) {
    throw new ChainError('invalid_argument', `${what} must be 64 hex characters`);
  }
  return value.toLowerCase();
}

/**
 * Bytes of a hex string the node sent (blocks, filters): Node's native decoder, several times faster than a
 * JavaScript one on megabytes of blocks. It stops at the first non-hex pair, which the length check catches.
 */
export function expectHexBytes(value: unknown, what: string): Uint8Array {
  const hex = expectString(value, what);
  const bytes = Buffer.from(hex, 'hex');
  if (hex.length % 2 !== 0 || bytes.length * 2 !== hex.length) throw new ChainError('bad_response', `Bitcoin Core sent a ${what} that is not hex`);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}
