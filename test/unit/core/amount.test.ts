import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmountError,
  MAX_MONEY,
  parseAmount,
  parseBtc,
  parseSats,
  parseScaledDecimal,
  satsToBtcFixed,
  satsToBtcNumber,
  satsToBtcText,
} from '../../../src/core/amount.js';

const sats = fc.bigInt({ min: 1n, max: MAX_MONEY });

describe('parseAmount: accepted inputs', () => {
  const btcCases: [unknown, bigint][] = [
    ['1', 100_000_000n],
    ['0.1', 10_000_000n],
    ['0.00000001', 1n],
    ['21000000', MAX_MONEY],
    ['20999999.99999999', MAX_MONEY - 1n],
    ['1.5e-7', 15n],
    ['1E-8', 1n],
    ['1e+2', 10_000_000_000n],
    ['0.100000000', 10_000_000n], // trailing zeros past 8 decimals do not change the value
    [0.1, 10_000_000n],
    [1e-8, 1n], // String(1e-8) is "1e-8"
    [5e-7, 50n],
    [0.3, 30_000_000n], // the shortest form of the double nearest 0.3 is "0.3"
    [1.23456789, 123_456_789n],
    [21e6, MAX_MONEY],
    [20999999.99999999, MAX_MONEY - 1n],
  ];
  it.each(btcCases)('btc %s', (input, expected) => {
    expect(parseAmount(input, 'btc')).toBe(expected);
  });

  const satCases: [unknown, bigint][] = [
    ['1', 1n],
    ['546', 546n],
    [546, 546n],
    ['1e3', 1000n],
    ['1.0', 1n],
    [2_100_000_000_000_000, MAX_MONEY],
  ];
  it.each(satCases)('sat %s', (input, expected) => {
    expect(parseAmount(input, 'sat')).toBe(expected);
  });

  it('accepts zero only when asked', () => {
    expect(parseBtc('0', { allowZero: true })).toBe(0n);
    expect(parseSats(0, { allowZero: true })).toBe(0n);
    expect(() => parseBtc('0')).toThrow(expect.objectContaining({ code: 'amount_zero' }));
  });
});

describe('parseAmount: refused inputs give a typed error with a code', () => {
  const refused: [unknown, 'btc' | 'sat', string][] = [
    ['', 'btc', 'amount_empty'],
    [' 1', 'btc', 'amount_malformed'],
    ['1 ', 'btc', 'amount_malformed'],
    ['1 000', 'sat', 'amount_malformed'],
    ['\t1', 'btc', 'amount_malformed'],
    ['1\n', 'btc', 'amount_malformed'],
    ['\u00a01', 'btc', 'amount_malformed'],
    ['0x10', 'sat', 'amount_malformed'],
    ['0b1', 'sat', 'amount_malformed'],
    ['+1', 'btc', 'amount_malformed'],
    ['01', 'btc', 'amount_malformed'],
    ['.5', 'btc', 'amount_malformed'],
    ['1.', 'btc', 'amount_malformed'],
    ['1,5', 'btc', 'amount_malformed'],
    ['1e', 'btc', 'amount_malformed'],
    ['--1', 'btc', 'amount_malformed'],
    ['１', 'btc', 'amount_malformed'], // full-width digit
    ['NaN', 'btc', 'amount_not_finite'],
    ['Infinity', 'btc', 'amount_not_finite'],
    ['-inf', 'btc', 'amount_not_finite'],
    [Number.NaN, 'btc', 'amount_not_finite'],
    [Number.POSITIVE_INFINITY, 'sat', 'amount_not_finite'],
    ['0.000000001', 'btc', 'amount_too_precise'],
    ['1.123456789', 'btc', 'amount_too_precise'],
    [1e-9, 'btc', 'amount_too_precise'],
    ['1e-9', 'btc', 'amount_too_precise'],
    ['1e-99999', 'btc', 'amount_too_precise'],
    ['1.5', 'sat', 'amount_too_precise'],
    [0.5, 'sat', 'amount_too_precise'],
    ['-1', 'btc', 'amount_negative'],
    [-0.1, 'btc', 'amount_negative'],
    ['-0', 'btc', 'amount_negative'],
    ['0', 'btc', 'amount_zero'],
    ['0.00000000', 'btc', 'amount_zero'],
    [0, 'sat', 'amount_zero'],
    ['21000000.00000001', 'btc', 'amount_too_large'],
    ['2100000000000001', 'sat', 'amount_too_large'],
    [1e300, 'btc', 'amount_too_large'],
    ['1e99999', 'btc', 'amount_too_large'],
    [null, 'btc', 'amount_type'],
    [true, 'btc', 'amount_type'],
    [{}, 'btc', 'amount_type'],
    [[1], 'btc', 'amount_type'],
    [1n, 'sat', 'amount_type'],
    ['1', 'BTC' as 'btc', 'amount_unit'],
    ['1', 'msat' as 'sat', 'amount_unit'],
  ];
  it.each(refused)('%s (%s) -> %s', (input, unit, code) => {
    let error: unknown;
    try {
      parseAmount(input, unit);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AmountError);
    expect((error as AmountError).code).toBe(code);
    expect((error as AmountError).message.length).toBeGreaterThan(10);
  });

  it('never throws anything but AmountError, whatever the input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.double(), fc.anything()), fc.constantFrom('btc' as const, 'sat' as const), (input, unit) => {
        try {
          const value = parseAmount(input, unit);
          expect(value > 0n && value <= MAX_MONEY).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(AmountError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('survives decimal-looking garbage', () => {
    const pieces = fc.constantFrom('0', '1', '9', '.', 'e', 'E', '-', '+', ' ', 'x', '00000000000');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        try {
          parseAmount(parts.join(''), 'btc');
        } catch (e) {
          expect(e).toBeInstanceOf(AmountError);
        }
      }),
    );
  });
});

describe('satoshis to BTC', () => {
  const cases: [bigint, string, string, number][] = [
    [0n, '0', '0.00000000', 0],
    [1n, '0.00000001', '0.00000001', 1e-8],
    [10_000_000n, '0.1', '0.10000000', 0.1],
    [150_000_000n, '1.5', '1.50000000', 1.5],
    [123_456_789n, '1.23456789', '1.23456789', 1.23456789],
    [MAX_MONEY, '21000000', '21000000.00000000', 21000000],
    [MAX_MONEY - 1n, '20999999.99999999', '20999999.99999999', 20999999.99999999],
    [-30_000_000n, '-0.3', '-0.30000000', -0.3],
  ];
  it.each(cases)('%s sat', (value, text, fixed, number) => {
    expect(satsToBtcText(value)).toBe(text);
    expect(satsToBtcFixed(value)).toBe(fixed);
    expect(satsToBtcNumber(value)).toBe(number);
  });

  it('refuses values past 21 million BTC', () => {
    expect(() => satsToBtcText(MAX_MONEY + 1n)).toThrow(AmountError);
    expect(() => satsToBtcNumber(-MAX_MONEY - 1n)).toThrow(AmountError);
  });

  it('round-trips sats -> text -> sats for every amount', () => {
    fc.assert(
      fc.property(sats, (value) => {
        expect(parseBtc(satsToBtcText(value))).toBe(value);
        expect(parseBtc(satsToBtcFixed(value))).toBe(value);
        expect(parseSats(value.toString())).toBe(value);
      }),
      { numRuns: 5000 },
    );
  });

  it('round-trips sats -> JSON number -> sats, and the JSON text is the exact decimal', () => {
    const edges = fc.oneof(sats, fc.bigInt({ min: MAX_MONEY - 100_000n, max: MAX_MONEY }), fc.bigInt({ min: 1n, max: 1000n }));
    fc.assert(
      fc.property(edges, (value) => {
        const n = satsToBtcNumber(value);
        expect(parseBtc(n)).toBe(value);
        expect(parseBtc(JSON.parse(JSON.stringify({ n })).n)).toBe(value);
        expect(parseBtc(String(n))).toBe(value);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('parseScaledDecimal', () => {
  it('reads fee rates in sat/vB as sat/kvB exactly', () => {
    expect(parseScaledDecimal('1', 3, 'Fee rate')).toBe(1000n);
    expect(parseScaledDecimal('1.234', 3, 'Fee rate')).toBe(1234n);
    expect(parseScaledDecimal(2.5, 3, 'Fee rate')).toBe(2500n);
    expect(parseScaledDecimal('0', 3, 'Fee rate')).toBe(0n);
    expect(() => parseScaledDecimal('1.2345', 3, 'Fee rate')).toThrow(/Fee rate has more than 3 decimal places/);
    expect(() => parseScaledDecimal('-1', 3, 'Fee rate')).toThrow(AmountError);
  });
});
