import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex } from '../../../src/core/bytes.js';
import {
  CoinSelectionError,
  feeForVsize,
  InsufficientFundsError,
  seededRandom,
  selectCoins,
  type Coin,
  type SelectionRequest,
  type SelectionResult,
} from '../../../src/core/coinselect/index.js';
import { selectBnB } from '../../../src/core/coinselect/algorithms.js';
import { CoreError } from '../../../src/core/errors.js';
import { dustThreshold, estimateVsize, outputVsize, type InputType } from '../../../src/core/size.js';

const SCRIPTS = [
  fromHex('0014' + '11'.repeat(20)),
  fromHex('5120' + '22'.repeat(32)),
  fromHex('76a914' + '33'.repeat(20) + '88ac'),
  fromHex('a914' + '44'.repeat(20) + '87'),
  fromHex('0020' + '55'.repeat(32)),
];
const INPUT_TYPES: InputType[] = [
  { kind: 'wpkh' },
  { kind: 'tr' },
  { kind: 'pkh' },
  { kind: 'sh-wpkh' },
  { kind: 'wsh-multi', m: 2, n: 3 },
  { kind: 'sh-wsh-multi', m: 2, n: 3 },
  { kind: 'sh-multi', m: 1, n: 2 },
];

/** Realistic values: log-uniform from 1,000 sat to 10 BTC, plus occasional tiny coins. */
const coinValue = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: 3000, max: 10000 }).map((e) => BigInt(Math.round(10 ** (e / 1000)))) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 2000n }) },
);

const coinArb = fc.record({
  value: coinValue,
  type: fc.constantFrom(...INPUT_TYPES),
  confirmed: fc.boolean(),
  isOwnChange: fc.boolean(),
});

const requestArb = fc
  .record({
    coins: fc.array(coinArb, { minLength: 0, maxLength: 40 }),
    recipients: fc.array(
      fc.record({ script: fc.constantFrom(...SCRIPTS), value: fc.integer({ min: 3000, max: 8000 }).map((e) => BigInt(Math.round(10 ** (e / 1000)))) }),
      { minLength: 1, maxLength: 4 },
    ),
    changeScript: fc.constantFrom(...SCRIPTS),
    changeType: fc.constantFrom(...INPUT_TYPES),
    // 0.1 to 500 sat/vB, in sat/kvB, including fractional rates
    feeRate: fc.bigInt({ min: 100n, max: 500_000n }),
    subtract: fc.option(fc.nat(3), { nil: undefined }),
    mustUse: fc.array(fc.nat(39), { maxLength: 3 }),
    minimumFee: fc.option(fc.bigInt({ min: 0n, max: 200_000n }), { nil: undefined }),
    incremental: fc.option(fc.bigInt({ min: 0n, max: 5000n }), { nil: undefined }),
    seed: fc.nat(),
  })
  .map((r): SelectionRequest => {
    const coins: Coin[] = r.coins.map((c, i) => ({ id: `coin${i}`, value: c.value, inputType: c.type, confirmed: c.confirmed, isOwnChange: c.isOwnChange }));
    return {
      coins,
      recipients: r.recipients,
      changeScript: r.changeScript,
      changeInputType: r.changeType,
      feeRate: r.feeRate,
      options: {
        random: seededRandom(r.seed),
        ...(r.subtract !== undefined && r.subtract < r.recipients.length ? { subtractFeeFrom: r.subtract } : {}),
        mustUse: [...new Set(r.mustUse.filter((i) => i < coins.length).map((i) => `coin${i}`))],
        ...(r.minimumFee !== undefined ? { minimumFee: r.minimumFee } : {}),
        ...(r.incremental !== undefined ? { minimumFeeIncrementalRate: r.incremental } : {}),
      },
    };
  });

type Outcome = { result: SelectionResult } | { error: unknown };
function run(request: SelectionRequest): Outcome {
  try {
    return { result: selectCoins(request) };
  } catch (error) {
    return { error };
  }
}

const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

describe('coin selection properties', () => {
  it('keeps every money invariant whenever it succeeds, and fails only with typed errors', () => {
    let successes = 0;
    fc.assert(
      fc.property(requestArb, (request) => {
        const outcome = run(request);
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(CoreError);
          if (outcome.error instanceof InsufficientFundsError) expect(outcome.error.missing).toBeGreaterThan(0n);
          return;
        }
        successes++;
        const { result } = outcome;
        const options = request.options!;
        // never selects a coin twice, only coins offered, every must-use coin
        const ids = result.inputs.map((c) => c.id);
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of ids) expect(request.coins.some((c) => c.id === id)).toBe(true);
        for (const id of options.mustUse ?? []) expect(ids).toContain(id);
        expect(result.inputs.length).toBeGreaterThan(0);

        // inputs = outputs + fee, exactly
        const inputs = sum(result.inputs.map((c) => c.value));
        const outputs = sum(result.recipients.map((r) => r.value)) + (result.change ?? 0n);
        expect(inputs).toBe(outputs + result.fee);

        // the size is the signed size of exactly these inputs and outputs
        const scripts = [...result.recipients.map((r) => r.script), ...(result.change === null ? [] : [request.changeScript])];
        expect(result.vsize).toBe(estimateVsize(result.inputs.map((c) => c.inputType!), scripts));

        // never below the requested rate or the minimum fee
        const required = feeForVsize(request.feeRate, result.vsize);
        const minimum = (options.minimumFee ?? 0n) + feeForVsize(options.minimumFeeIncrementalRate ?? 0n, result.vsize);
        expect(result.fee).toBeGreaterThanOrEqual(required);
        expect(result.fee).toBeGreaterThanOrEqual(minimum);

        // never overspends: recipients get what was asked (less the fee for the paying one), change is
        // real change, and the fee is over the requirement only by a leftover too small to be change
        const floor = minimum > required ? minimum : required;
        request.recipients.forEach((r, i) => {
          const paid = result.recipients[i]!;
          expect(paid.script).toBe(r.script);
          if (options.subtractFeeFrom === i) {
            expect(paid.value).toBe(r.value - floor);
            expect(paid.value).toBeGreaterThanOrEqual(dustThreshold(r.script));
          } else {
            expect(paid.value).toBe(r.value);
          }
        });
        if (result.change !== null) {
          expect(result.fee).toBe(floor);
          expect(result.change).toBeGreaterThanOrEqual(dustThreshold(request.changeScript));
        } else {
          const changeFee = feeForVsize(request.feeRate, outputVsize(request.changeScript) + 1);
          expect(result.fee - floor).toBeLessThan(dustThreshold(request.changeScript, 10_000n) + 1000n + changeFee);
        }
      }),
      { numRuns: 400 },
    );
    expect(successes).toBeGreaterThan(100);
  });

  it('prefers confirmed coins: an unconfirmed coin is chosen only when the confirmed ones cannot pay', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        const plain = { ...request, options: { ...request.options, mustUse: [] } };
        const outcome = run(plain);
        if ('error' in outcome) return;
        const chosen = outcome.result.inputs;
        const unconfirmedOthers = chosen.some((c) => !c.confirmed && !c.isOwnChange);
        const unconfirmedOwn = chosen.some((c) => !c.confirmed && c.isOwnChange);
        if (unconfirmedOwn || unconfirmedOthers) {
          const confirmedOnly = run({ ...plain, coins: plain.coins.filter((c) => c.confirmed) });
          expect('error' in confirmedOnly && confirmedOnly.error instanceof CoinSelectionError).toBe(true);
        }
        if (unconfirmedOthers) {
          const withOwn = run({ ...plain, coins: plain.coins.filter((c) => c.confirmed || c.isOwnChange) });
          expect('error' in withOwn && withOwn.error instanceof CoinSelectionError).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds the changeless exact match when one exists', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 10_000, max: 5_000_000 }), { minLength: 2, maxLength: 30 }),
        fc.array(fc.nat(29), { minLength: 1, maxLength: 4 }),
        fc.bigInt({ min: 1000n, max: 50_000n }),
        (values, picks, feeRate) => {
          expect(bnbFindsExactSubset(values, picks)).toBe(true);
          // Coins all wpkh (68 vB): choose a subset and set the payment so that subset matches exactly.
          const coins: Coin[] = values.map((v, i) => ({ id: `c${i}`, value: BigInt(v), inputType: { kind: 'wpkh' }, confirmed: true }));
          const subset = [...new Set(picks.filter((i) => i < coins.length))];
          const inputFee = feeForVsize(feeRate, 68);
          const notInputFee = feeForVsize(feeRate, 4 + 4 + 1 + 1 + 1 + 31);
          const amount = sum(subset.map((i) => coins[i]!.value - inputFee)) - notInputFee;
          fc.pre(amount >= 294n);
          const result = selectCoins({
            coins,
            recipients: [{ script: SCRIPTS[0]!, value: amount }],
            changeScript: SCRIPTS[0]!,
            changeInputType: { kind: 'wpkh' },
            feeRate,
            // Spending now costs what it would later: inputs add no waste, so the changeless match
            // (waste 0) beats any selection with change (waste = cost of change).
            options: { random: seededRandom(1), longTermFeeRate: feeRate },
          });
          // BnB may find another subset within the cost of change; it always ends without change.
          expect(result.change).toBeNull();
          expect(result.algorithm).toBe('bnb');
          expect(result.fee).toBeGreaterThanOrEqual(feeForVsize(feeRate, result.vsize));
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** selectBnB with no cost of change returns a subset summing exactly to a target that some subset sums to. */
function bnbFindsExactSubset(values: number[], picks: number[]): boolean {
  const pool = values.map((amount, index) => ({ index, amount, fee: 100, longTermFee: 50, weight: 272 }));
  const target = [...new Set(picks.filter((i) => i < values.length))].reduce((t, i) => t + values[i]!, 0);
  const found = selectBnB(pool, target, 0, 400_000);
  return found !== null && found.reduce((t, c) => t + c.amount, 0) === target;
}
