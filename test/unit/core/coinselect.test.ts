import { describe, expect, it } from 'vitest';
import { fromHex } from '../../../src/core/bytes.js';
import { selectBnB, selectLargestFirst, selectSrd, sortByAmountDescending, type PoolCoin } from '../../../src/core/coinselect/algorithms.js';
import {
  CoinSelectionError,
  feeForVsize,
  formatFeeRate,
  InsufficientFundsError,
  parseFeeRate,
  seededRandom,
  selectCoins,
  type Coin,
  type SelectionRequest,
} from '../../../src/core/coinselect/index.js';
import { estimateVsize, inputVsize, type InputType } from '../../../src/core/size.js';
import { parseBlock, parseTransaction, txid, type Transaction } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

const P2WPKH = fromHex('0014' + '11'.repeat(20));
const P2TR = fromHex('5120' + '22'.repeat(32));
const P2PKH = fromHex('76a914' + '33'.repeat(20) + '88ac');
const CHANGE = fromHex('0014' + '44'.repeat(20));
const WPKH: InputType = { kind: 'wpkh' };

const coin = (id: string, value: bigint, extra: Partial<Coin> = {}): Coin => ({ id, value, inputType: WPKH, confirmed: true, ...extra });

function request(coins: Coin[], amount: bigint, extra: Partial<SelectionRequest> = {}, options: SelectionRequest['options'] = {}): SelectionRequest {
  return {
    coins,
    recipients: [{ script: P2WPKH, value: amount }],
    changeScript: CHANGE,
    changeInputType: WPKH,
    feeRate: 1000n,
    ...extra,
    options: { random: seededRandom(1), ...options },
  };
}

/** Pool coins that know their position, to name what an algorithm chose. */
type NumberedCoin = PoolCoin & { index: number };
const pool = (amounts: number[], fee = 0, longTermFee = 0): NumberedCoin[] =>
  amounts.map((amount, index) => ({ index, amount, fee, longTermFee, weight: 272 }));
const indexes = (selection: NumberedCoin[] | null) => selection && selection.map((c) => c.index).sort((a, b) => a - b);

describe('Branch and Bound (as Bitcoin Core SelectCoinsBnB)', () => {
  const CENT = 1_000_000;
  const coins = pool([1, 2, 3, 4].map((c) => c * CENT));

  it('finds the exact matches Core finds in its bnb_search_test', () => {
    expect(indexes(selectBnB(coins, 1 * CENT, 0.5 * CENT, 400_000))).toEqual([0]);
    expect(indexes(selectBnB(coins, 2 * CENT, 0.5 * CENT, 400_000))).toEqual([1]);
    // {4,1} is found first, {3,2} later with equal waste: Core keeps the later one.
    expect(indexes(selectBnB(coins, 5 * CENT, 0.5 * CENT, 400_000))).toEqual([1, 2]);
    expect(indexes(selectBnB(coins, 10 * CENT, 0.5 * CENT, 400_000))).toEqual([0, 1, 2, 3]);
  });

  it('fails when no subset lands in [target, target + cost of change]', () => {
    expect(selectBnB(coins, 11 * CENT, 0.5 * CENT, 400_000)).toBeNull();
    expect(selectBnB(pool([4 * CENT, 6 * CENT]), 4.5 * CENT, 0.4 * CENT, 400_000)).toBeNull();
  });

  it('accepts an excess up to the cost of change, preferring the least waste', () => {
    // 4.3 is within 4 + 0.5; 4.0 exact would be better but does not exist.
    expect(indexes(selectBnB(pool([4.3 * CENT, 1.5 * CENT, 2.9 * CENT]), 4 * CENT, 0.5 * CENT, 400_000))).toEqual([0]);
    expect(indexes(selectBnB(pool([4.3 * CENT, 1.5 * CENT, 2.5 * CENT]), 4 * CENT, 0.5 * CENT, 400_000))).toEqual([1, 2]);
  });

  it('at a high fee rate prefers fewer inputs; at a low fee rate more inputs (waste metric)', () => {
    const amounts = [3 * CENT, 2 * CENT, 1 * CENT];
    // fee > long-term fee: each input adds waste, so the single 3-cent coin wins over 2+1.
    expect(indexes(selectBnB(pool(amounts, 100, 10), 3 * CENT, 0, 400_000))).toEqual([0]);
    // fee < long-term fee: spending now is cheaper, so 2+1 (more inputs) wins.
    expect(indexes(selectBnB(pool(amounts, 10, 100), 3 * CENT, 0, 400_000))).toEqual([1, 2]);
  });

  it('respects the weight limit', () => {
    expect(indexes(selectBnB(coins, 3 * CENT, 0, 300))).toEqual([2]);
    expect(selectBnB(pool([1, 1, 1].map((c) => c * CENT)), 3 * CENT, 0, 600)).toBeNull();
  });

  it('stops after the try limit and still finds matches among many equal coins quickly', () => {
    const many = pool([...Array<number>(1000).fill(CENT), 5 * CENT + 1]);
    expect(indexes(selectBnB(many, 7 * CENT, 0, 400_000))).toHaveLength(7);
    expect(selectBnB(many, 7 * CENT, 0, 400_000, 3)).toBeNull();
  });
});

describe('sortByAmountDescending', () => {
  it('orders by amount, ties by position, on the packed-key path and on the comparator path alike', () => {
    const small = pool([5, 7, 5, 0, 9, 7]);
    expect(sortByAmountDescending(small).map((c) => c.index)).toEqual([4, 1, 5, 0, 2, 3]);
    // Amounts too large to pack with the position take the comparator path.
    const large = pool([2e15, 7, 2e15, 2.1e15, 9]);
    expect(sortByAmountDescending(large).map((c) => c.index)).toEqual([3, 0, 2, 4, 1]);
    const negative = pool([-5, 3, 0]);
    expect(sortByAmountDescending(negative).map((c) => c.index)).toEqual([1, 2, 0]);
  });
});

describe('SRD and largest-first', () => {
  it('SRD draws until target + change fee + 50,000 sat, reproducibly for a seed', () => {
    const coins = pool([10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    const a = selectSrd(coins, 30_000, 31, 400_000, seededRandom(7))!;
    const b = selectSrd(coins, 30_000, 31, 400_000, seededRandom(7))!;
    expect(indexes(a)).toEqual(indexes(b));
    const total = a.reduce((sum, c) => sum + c.amount, 0);
    expect(total).toBeGreaterThanOrEqual(80_031);
    expect(total - a.at(-1)!.amount).toBeLessThan(80_031); // it stopped at the first coin that reached the goal
    expect(selectSrd(coins, 170_000, 31, 400_000, seededRandom(7))).toBeNull();
  });

  it('largest-first takes the biggest coins until the target is covered', () => {
    expect(indexes(selectLargestFirst(pool([5, 50, 20, 40]), 60, 400_000))).toEqual([1, 3]);
    expect(selectLargestFirst(pool([5, 50]), 60, 400_000)).toBeNull();
  });
});

describe('selectCoins', () => {
  // Recipient P2WPKH at 1 sat/vB: fixed part 4+4+1+1+1(marker)+31 = 42 sat; a wpkh input 68 sat.
  it('finds a changeless exact match with BnB and pays exactly the fee of the signed size', () => {
    const coins = [coin('a', 500_000n), coin('exact', 100_110n), coin('b', 80_000n), coin('c', 300_000n)];
    const result = selectCoins(request(coins, 100_000n));
    expect(result.algorithm).toBe('bnb');
    expect(result.inputs.map((c) => c.id)).toEqual(['exact']);
    expect(result.change).toBeNull();
    expect(result.vsize).toBe(estimateVsize([WPKH], [P2WPKH])); // 109.5 -> 110
    expect(result.fee).toBe(110n);
    expect(result.recipients[0]!.value).toBe(100_000n);
  });

  it('finds a two-coin changeless match', () => {
    const coins = [coin('a', 1_000_000n), coin('b', 60_068n), coin('c', 40_110n), coin('d', 2_000_000n)];
    const result = selectCoins(request(coins, 100_000n));
    expect(result.inputs.map((c) => c.id).sort()).toEqual(['b', 'c']);
    expect(result.change).toBeNull();
    expect(result.fee).toBe(100_178n - 100_000n);
    expect(result.fee).toBeGreaterThanOrEqual(feeForVsize(1000n, result.vsize));
  });

  it('makes change when there is no match, with the fee of the size including the change output', () => {
    const result = selectCoins(request([coin('a', 1_000_000n)], 100_000n, { feeRate: 2500n }));
    expect(result.change).not.toBeNull();
    expect(result.vsize).toBe(estimateVsize([WPKH], [P2WPKH, CHANGE])); // 141
    expect(result.fee).toBe(feeForVsize(2500n, 141)); // 352.5 -> 353
    expect(result.change).toBe(1_000_000n - 100_000n - 353n);
  });

  it('falls back to largest-first when neither BnB nor SRD (target + 50,000 sat) can succeed', () => {
    const result = selectCoins(request([coin('a', 60_000n), coin('b', 50_000n), coin('c', 1_000n)], 100_000n));
    expect(result.algorithm).toBe('largest-first');
    expect(result.inputs.map((c) => c.id)).toEqual(['a', 'b']);
    expect(result.change).toBe(110_000n - 100_000n - feeForVsize(1000n, estimateVsize([WPKH, WPKH], [P2WPKH, CHANGE])));
  });

  it('gives a leftover below the smallest viable change to the fee', () => {
    // Leftover after the fee with change would be ~ 500 sat < max(681, 980 dust at the 10 sat/vB discard rate).
    const value = 100_000n + 141n + 500n;
    const result = selectCoins(request([coin('a', value)], 100_000n));
    expect(result.change).toBeNull();
    expect(result.fee).toBe(641n);
    expect(result.vsize).toBe(110);
  });

  it('takes the whole fee from the chosen recipient when asked, and refuses to leave it below dust', () => {
    const recipients = [
      { script: P2TR, value: 50_000n },
      { script: P2WPKH, value: 1_000_000n },
    ];
    const result = selectCoins(request([coin('a', 1_050_000n)], 0n, { recipients, feeRate: 3000n }, { subtractFeeFrom: 1 }));
    expect(result.change).toBeNull();
    const fee = feeForVsize(3000n, estimateVsize([WPKH], [P2TR, P2WPKH]));
    expect(result.fee).toBe(fee);
    expect(result.recipients.map((r) => r.value)).toEqual([50_000n, 1_000_000n - fee]);

    expect(() => selectCoins(request([coin('a', 1_000_000n)], 500n, { feeRate: 3000n }, { subtractFeeFrom: 0 }))).toThrow(
      expect.objectContaining({ code: 'amount_below_dust' }),
    );
  });

  it('with fee subtraction, spends everything to a recipient ("send max")', () => {
    const coins = [coin('a', 40_000n), coin('b', 60_000n)];
    const result = selectCoins(request(coins, 100_000n, { feeRate: 2000n }, { subtractFeeFrom: 0 }));
    expect(result.inputs).toHaveLength(2);
    expect(result.change).toBeNull();
    expect(result.fee).toBe(feeForVsize(2000n, estimateVsize([WPKH, WPKH], [P2WPKH])));
    expect(result.recipients[0]!.value).toBe(100_000n - result.fee);
  });

  it('refuses a recipient below the dust limit of its output type', () => {
    expect(() => selectCoins(request([coin('a', 1_000_000n)], 293n))).toThrow(expect.objectContaining({ code: 'amount_below_dust' }));
    expect(() => selectCoins(request([coin('a', 1_000_000n)], 545n, { recipients: [{ script: P2PKH, value: 545n }] }))).toThrow(
      /546 sat/,
    );
  });

  it('says exactly how much is missing', () => {
    // Target 20,000 + 42; the coin is worth 10,000 - 68 after its own fee.
    const error = (() => {
      try {
        selectCoins(request([coin('a', 10_000n)], 20_000n));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InsufficientFundsError);
    expect((error as InsufficientFundsError).missing).toBe(20_042n - 9_932n);
    expect((error as InsufficientFundsError).code).toBe('insufficient_funds');
    expect((error as InsufficientFundsError).message).toMatch(/10110 sat/);
  });

  it('uses unconfirmed coins only when confirmed ones do not suffice: own change before others', () => {
    const confirmed = coin('confirmed', 50_000n);
    const ownChange = coin('own-change', 80_000n, { confirmed: false, isOwnChange: true });
    const foreign = coin('foreign', 500_000n, { confirmed: false });
    const coins = [foreign, ownChange, confirmed];
    expect(selectCoins(request(coins, 40_000n)).inputs.map((c) => c.id)).toEqual(['confirmed']);
    expect(selectCoins(request(coins, 100_000n)).inputs.map((c) => c.id).sort()).toEqual(['confirmed', 'own-change']);
    expect(selectCoins(request(coins, 200_000n)).inputs.map((c) => c.id)).toContain('foreign');
  });

  it('spends every must-use coin, even when others would do', () => {
    const coins = [coin('big', 10_000_000n), coin('small', 30_000n, { confirmed: false })];
    const result = selectCoins(request(coins, 20_000n, {}, { mustUse: ['small'] }));
    expect(result.inputs.map((c) => c.id)).toEqual(['small']);
    expect(result.algorithm).toBe('manual');
    const more = selectCoins(request(coins, 100_000n, {}, { mustUse: ['small'] }));
    expect(more.inputs.map((c) => c.id)).toEqual(['small', 'big']);
    expect(() => selectCoins(request(coins, 20_000n, {}, { mustUse: ['nope'] }))).toThrow(expect.objectContaining({ code: 'unknown_coin' }));
  });

  it('pays at least a minimum absolute fee (BIP125 replacement), from change or by adding coins', () => {
    const withChange = selectCoins(request([coin('a', 1_000_000n)], 100_000n, {}, { minimumFee: 5_000n }));
    expect(withChange.fee).toBe(5_000n);
    expect(withChange.change).toBe(1_000_000n - 100_000n - 5_000n);
    // An exact match would pay 110 sat: not enough, so another coin is needed.
    const coins = [coin('exact', 100_110n), coin('b', 20_000n, { confirmed: false })];
    const bumped = selectCoins(request(coins, 100_000n, {}, { minimumFee: 1_000n }));
    expect(bumped.fee).toBeGreaterThanOrEqual(1_000n);
    expect(bumped.inputs).toHaveLength(2);
  });

  it('pays for its own relay on top of the replaced fee (BIP125 rule 4)', () => {
    const result = selectCoins(request([coin('a', 1_000_000n)], 100_000n, {}, { minimumFee: 5_000n, minimumFeeIncrementalRate: 1000n }));
    expect(result.vsize).toBe(141);
    expect(result.fee).toBe(5_000n + 141n);
    expect(result.change).toBe(1_000_000n - 100_000n - 5_141n);
  });

  it('with a minimum fee larger than the rate asks, spends confirmed coins and own change before foreign unconfirmed ones, and never refuses a wallet that can pay', () => {
    // A replacement's minimum fee does not grow with the inputs, while each selection round counts every input's
    // fee at the rate: these coins can pay only all together, and a foreign unconfirmed coin must not be needed.
    const tight = [
      coin('confirmed', 78_886n),
      coin('own-a', 39_719n, { confirmed: false, isOwnChange: true }),
      coin('own-b', 82_414n, { confirmed: false, isOwnChange: true }),
    ];
    const foreign = coin('foreign', 10_568n, { confirmed: false, isOwnChange: false });
    const options = { minimumFee: 199_995n, minimumFeeIncrementalRate: 1n };
    for (let seed = 0; seed < 200; seed++) {
      for (const coins of [tight, [...tight, foreign]]) {
        const result = selectCoins(request(coins, 1_000n, { feeRate: 155_334n }, { ...options, random: seededRandom(seed) }));
        expect(result.inputs.map((c) => c.id).sort()).toEqual(['confirmed', 'own-a', 'own-b']);
        expect(result.fee).toBe(78_886n + 39_719n + 82_414n - 1_000n);
      }
    }
  });

  it('handles fractional fee rates exactly (millisat per vbyte)', () => {
    const result = selectCoins(request([coin('a', 1_000_000n)], 100_000n, { feeRate: parseFeeRate('1.234') }));
    expect(result.fee).toBe(feeForVsize(1234n, result.vsize));
    expect(result.fee).toBe(BigInt(Math.ceil((1.234 * 141 * 1000) / 1000)));
  });

  it('counts each coin`s own input size: legacy, nested segwit, taproot and multisig', () => {
    const types: InputType[] = [{ kind: 'pkh' }, { kind: 'sh-wpkh' }, { kind: 'tr' }, { kind: 'wsh-multi', m: 2, n: 3 }, { kind: 'sh-multi', m: 2, n: 3 }];
    const coins = types.map((t, i) => coin(`c${i}`, 30_000n, { inputType: t }));
    const result = selectCoins(request(coins, 140_000n, { feeRate: 2000n }));
    expect(result.inputs).toHaveLength(5);
    expect(result.vsize).toBe(estimateVsize(types, [P2WPKH, ...(result.change === null ? [] : [CHANGE])]));
    expect(result.fee).toBeGreaterThanOrEqual(feeForVsize(2000n, result.vsize));
    // A coin given by size only is charged by that size.
    const sized = selectCoins(request([{ id: 'x', value: 100_000n, inputVsize: 100, confirmed: true }], 50_000n));
    expect(sized.fee).toBeGreaterThanOrEqual(BigInt(10 + 100 + 31 + 31));
  });

  it('skips coins that cost more to spend than they are worth', () => {
    const coins = [coin('dust', 60n), coin('a', 200_000n)];
    const result = selectCoins(request(coins, 100_000n));
    expect(result.inputs.map((c) => c.id)).toEqual(['a']);
    expect(() => selectCoins(request([coin('dust', 60n)], 1_000n))).toThrow(InsufficientFundsError);
  });

  it('refuses a selection past the standard weight limit', () => {
    const coins = Array.from({ length: 2000 }, (_, i) => coin(`c${i}`, 1_000n));
    expect(() => selectCoins(request(coins, 1_500_000n))).toThrow(expect.objectContaining({ code: 'max_weight_exceeded' }));
  });

  it('is reproducible with a seeded random source', () => {
    const coins = Array.from({ length: 200 }, (_, i) => coin(`c${i}`, BigInt(10_000 + ((i * 7919) % 100_000))));
    const a = selectCoins(request(coins, 500_000n, {}, { random: seededRandom(42) }));
    const b = selectCoins(request(coins, 500_000n, {}, { random: seededRandom(42) }));
    expect(a).toEqual(b);
  });

  it('refuses malformed requests with a typed error', () => {
    const ok = request([coin('a', 1_000_000n)], 100_000n);
    const bad: Partial<SelectionRequest>[] = [
      { recipients: [] },
      { feeRate: -1n },
      { feeRate: 1.5 as unknown as bigint },
      { coins: [coin('a', 1n), coin('a', 2n)] },
      { coins: [coin('a', -1n)] },
      { coins: [{ id: 'a', value: 1n, confirmed: true }] },
      { coins: [coin('a', 1n, { confirmed: 1 as unknown as boolean })] },
      { recipients: [{ script: P2WPKH, value: 0n }] },
      { recipients: [{ script: P2WPKH, value: 2_100_000_000_000_001n }] },
      { coins: [coin('a', 2_000_000_000_000_000n), coin('b', 2_000_000_000_000_000n)] },
      { options: { subtractFeeFrom: 1 } },
      { options: { minimumFee: -1n } },
    ];
    for (const patch of bad) expect(() => selectCoins({ ...ok, ...patch }), JSON.stringify(Object.keys(patch))).toThrow(CoinSelectionError);
  });
});

describe('fee rates', () => {
  it('parses sat/vB text exactly into sat/kvB and formats fee/vsize with two decimals', () => {
    expect(parseFeeRate('5')).toBe(5000n);
    expect(parseFeeRate(0.1)).toBe(100n);
    expect(() => parseFeeRate('0.0001')).toThrow(/3 decimal places/);
    expect(() => parseFeeRate('abc')).toThrow(/not a decimal number/);
    expect(formatFeeRate(1000n, 141)).toBe('7.09');
    expect(formatFeeRate(920n, 184)).toBe('5.00');
    expect(formatFeeRate(1n, 200)).toBe('0.01'); // 0.005 rounds half up
    expect(feeForVsize(1n, 1)).toBe(1n);
    expect(feeForVsize(0n, 100)).toBe(0n);
    expect(inputVsize(WPKH)).toBe(68);
  });
});

describe('settlement matches Bitcoin Core on its own funded PSBTs', () => {
  const wallets = loadFixture<Record<string, any>>('wallets');
  const psbts = loadFixture<Record<string, any>>('psbts');
  const txs = new Map<string, Transaction>();
  for (const block of Object.values(loadFixture<Record<string, { hex: string }>>('blocks'))) {
    for (const tx of parseBlock(block.hex).transactions) txs.set(txid(tx), tx);
  }
  for (const snapshot of loadFixture('timeline').snapshots) for (const e of snapshot.mempool) txs.set(e.txid, parseTransaction(e.hex));

  const typeOf = (w: { type: string; sigs_required: number; keys: unknown[] }): InputType => {
    const multi = { m: w.sigs_required, n: w.keys.length };
    if (w.type.startsWith('sh-wsh-')) return { kind: 'sh-wsh-multi', ...multi };
    if (w.type.startsWith('wsh-')) return { kind: 'wsh-multi', ...multi };
    return { kind: w.type as 'pkh' | 'wpkh' | 'sh-wpkh' | 'tr' };
  };

  it.each(Object.keys(wallets))('%s: same inputs at 5 sat/vB give Core`s fee and change to the satoshi', (name) => {
    const entry = psbts[name];
    const tx = parseTransaction(entry.final.hex);
    const type = typeOf(wallets[name]);
    const coins: Coin[] = tx.inputs.map((input) => ({
      id: `${input.txid}:${input.vout}`,
      value: txs.get(input.txid)!.outputs[input.vout]!.value,
      inputType: type,
      confirmed: true,
    }));
    const change = tx.outputs[entry.change_position]!;
    const recipients = tx.outputs.filter((_, i) => i !== entry.change_position);
    const result = selectCoins({
      coins,
      recipients,
      changeScript: change.script,
      changeInputType: type,
      feeRate: parseFeeRate(entry.request.fee_rate_sat_vb),
      options: { mustUse: coins.map((c) => c.id), random: seededRandom(1) },
    });
    const coreFee = coins.reduce((sum, c) => sum + c.value, 0n) - tx.outputs.reduce((sum, o) => sum + o.value, 0n);
    expect(coreFee).toBe(BigInt(Math.round(entry.fee_btc * 1e8)));
    expect(result.fee).toBe(coreFee);
    expect(result.change).toBe(change.value);
    expect(result.recipients.map((r) => r.value)).toEqual(recipients.map((r) => r.value));
    expect(result.algorithm).toBe('manual');
  });
});

describe('a coin list reused across selections', () => {
  /** 3,000 coins of mixed types, some unconfirmed, some own change, values spread like a busy wallet. */
  const mixed = (): Coin[] => {
    const rng = seededRandom(7);
    const types: InputType[] = [WPKH, { kind: 'tr' }, { kind: 'wsh-multi', m: 2, n: 3 }];
    return Array.from({ length: 3_000 }, (_, i) =>
      coin(`${i.toString(16).padStart(64, '0')}:${i % 3}`, BigInt(1_000 + rng.nextInt(5_000_000)), {
        inputType: types[i % 3]!,
        confirmed: i % 17 !== 0,
        isOwnChange: i % 5 === 0,
      }),
    );
  };
  const shape = (r: ReturnType<typeof selectCoins>) => ({ ...r, inputs: r.inputs.map((c) => c.id) });

  it('selects exactly as from a fresh list, at every fee rate, with and without excluded coins, and as if excluded coins were left out', () => {
    const coins = mixed();
    const frozen = Object.freeze(coins.map((c) => Object.freeze({ ...c })));
    const excluded = new Set(coins.filter((_, i) => i % 7 === 0).map((c) => c.id));
    for (const [seed, feeRate, amount] of [[1, 1_000n, 2_000_000n], [2, 25_000n, 40_000_000n], [3, 1_000n, 2_000_000n], [4, 5_000n, 700_000n], [5, 25_000n, 40_000_000n]] as const) {
      const fresh = selectCoins(request([...coins], amount, { feeRate }, { random: seededRandom(seed) }));
      expect(shape(selectCoins(request(frozen as Coin[], amount, { feeRate }, { random: seededRandom(seed) })))).toEqual(shape(fresh));
      const leftOut = selectCoins(request(coins.filter((c) => !excluded.has(c.id)), amount, { feeRate }, { random: seededRandom(seed) }));
      const withExclusion = selectCoins(request(frozen as Coin[], amount, { feeRate }, { random: seededRandom(seed), exclude: excluded }));
      expect(shape(withExclusion)).toEqual(shape(leftOut));
      expect(withExclusion.inputs.some((c) => excluded.has(c.id))).toBe(false);
    }
  });

  it('selects from a new list that shares most coin objects with an earlier one (a block later) exactly as from a fresh list', () => {
    const coins = mixed();
    const before = Object.freeze(coins.map((c) => Object.freeze({ ...c })));
    // The next revision: every 11th coin spent, 40 new coins, two coins confirmed since (new objects), the rest the same objects.
    const added = mixed().slice(0, 40).map((c, i) => Object.freeze({ ...c, id: `${'f'.repeat(60)}${i.toString(16).padStart(4, '0')}:0` }));
    const after = Object.freeze([
      ...before.filter((_, i) => i % 11 !== 0).map((c, i) => (i === 16 || i === 33 ? Object.freeze({ ...c, confirmed: true }) : c)),
      ...added,
    ]);
    // Five fee rates, one more than the preparations kept per coin: the first is prepared again.
    const rates = [1_000n, 2_000n, 5_000n, 25_000n, 60_000n, 1_000n] as const;
    for (const [k, feeRate] of rates.entries()) {
      selectCoins(request(before as Coin[], 2_000_000n, { feeRate }, { random: seededRandom(k) }));
      for (const [amount, extra] of [[2_000_000n, {}], [40_000_000n, {}], [700_000n, { subtractFeeFrom: 0 }]] as const) {
        const fresh = selectCoins(request(after.map((c) => ({ ...c })), amount, { feeRate }, { random: seededRandom(k), ...extra }));
        expect(shape(selectCoins(request(after as Coin[], amount, { feeRate }, { random: seededRandom(k), ...extra })))).toEqual(shape(fresh));
      }
    }
    // A coin prepared as optional before is still spent when it must be.
    const mustUse = [after[0]!.id, added[3]!.id];
    const forced = selectCoins(request(after as Coin[], 10_000n, {}, { mustUse }));
    expect(forced.inputs.slice(0, 2).map((c) => c.id)).toEqual(mustUse);
  });

  it('does not take a coin prepared with the fee on top for one whose fee a recipient pays, nor the reverse', () => {
    const coins = Array.from({ length: 20 }, (_, i) => Object.freeze(coin(`${i.toString(16).padStart(64, 'a')}:0`, 100_000n)));
    const total = 20n * 100_000n;
    const before = Object.freeze([...coins]);
    const after = Object.freeze(coins.slice(1));
    // Paying the fee on top, 19 coins do not cover 1,890,000 sat; a recipient paying it, they do.
    selectCoins(request(before as Coin[], 50_000n, { feeRate: 10_000n }));
    const paid = selectCoins(request(after as Coin[], total - 110_000n, { feeRate: 10_000n }, { subtractFeeFrom: 0 }));
    expect(paid.inputs).toHaveLength(19);
    expect(() => selectCoins(request(Object.freeze([...after]) as Coin[], total - 110_000n, { feeRate: 10_000n }))).toThrow(InsufficientFundsError);
  });

  it('checks a frozen list like any other, and refuses a coin both to use and to exclude', () => {
    const twice = Object.freeze([Object.freeze(coin('a:0', 100_000n)), Object.freeze(coin('a:0', 200_000n))]);
    expect(() => selectCoins(request(twice as Coin[], 50_000n))).toThrow(/listed twice/);
    expect(() => selectCoins(request(twice as Coin[], 50_000n))).toThrow(/listed twice/);
    const coins = Object.freeze([Object.freeze(coin('a:0', 100_000n)), Object.freeze(coin('b:0', 200_000n))]);
    expect(() => selectCoins(request(coins as Coin[], 50_000n, {}, { mustUse: ['a:0'], exclude: new Set(['a:0']) }))).toThrow(CoinSelectionError);
    expect(() => selectCoins(request(coins as Coin[], 250_000n, {}, { exclude: new Set(['b:0']) }))).toThrow(InsufficientFundsError);
  });
});
