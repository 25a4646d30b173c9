/**
 * The selection algorithms, on plain numbers for speed (every amount here is bounded by 21
 * million BTC plus fees, far inside Number.MAX_SAFE_INTEGER; money is settled in bigint later).
 * Each returns the chosen coins (the caller's own objects), or null when it finds no solution.
 */
import type { RandomSource } from './random.js';

export interface PoolCoin {
  /** What counts toward the target: effective value (value minus its input fee), or the value when the fee is subtracted from a recipient. */
  amount: number;
  /** Fee to spend it now and at the long-term rate (waste metric). */
  fee: number;
  longTermFee: number;
  weight: number;
}

/** Bitcoin Core's BnB try limit. */
export const BNB_MAX_TRIES = 100_000;

/**
 * Coins by amount, largest first, ties by position. When amount and position fit together in
 * one double (amounts below 2^53 / pool size: any realistic wallet), a native numeric sort of
 * packed keys is several times faster than a comparator sort.
 */
export function sortByAmountDescending<T extends PoolCoin>(coins: readonly T[]): T[] {
  const n = coins.length;
  const scale = 2 ** Math.ceil(Math.log2(n + 1));
  let max = 0;
  for (const c of coins) if (c.amount > max) max = c.amount;
  if (coins.every((c) => c.amount >= 0) && (max + 1) * scale <= Number.MAX_SAFE_INTEGER) {
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = (max - coins[i]!.amount) * scale + i;
    keys.sort();
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = coins[keys[i]! % scale]!;
    return out;
  }
  return coins.map((c, i) => ({ c, i })).sort((a, b) => b.c.amount - a.c.amount || a.i - b.i).map((x) => x.c);
}

/**
 * Branch and Bound (Bitcoin Core's SelectCoinsBnB): depth-first search, largest first, for a
 * changeless selection with amount in [target, target + costOfChange] and the least waste.
 */
export function selectBnB<T extends PoolCoin>(
  coins: readonly T[],
  target: number,
  costOfChange: number,
  maxWeight: number,
  maxTries = BNB_MAX_TRIES,
  /** `coins` already in sortByAmountDescending's order, when the caller has it. */
  sorted?: readonly T[],
): T[] | null {
  const pool = sorted ?? sortByAmountDescending(coins);
  let available = 0;
  for (const c of pool) available += c.amount;
  if (pool.length === 0 || available < target) return null;

  // The search touches coins up to a hundred thousand times: flat typed arrays keep it fast.
  const n = pool.length;
  const amounts = new Float64Array(n);
  const fees = new Float64Array(n);
  const wastes = new Float64Array(n); // fee now minus fee later
  const weights = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const c = pool[k]!;
    amounts[k] = c.amount;
    fees[k] = c.fee;
    wastes[k] = c.fee - c.longTermFee;
    weights[k] = c.weight;
  }
  const isFeeRateHigh = wastes[0]! > 0;
  const chosen = new Int32Array(n); // pool positions on the current branch, a stack of `depth`
  let depth = 0;
  let value = 0;
  let waste = 0;
  let weight = 0;
  let bestWaste = Number.MAX_SAFE_INTEGER;
  let best: Int32Array | null = null;

  let i = 0;
  for (let tries = 0; tries < maxTries; tries++, i++) {
    let backtrack = false;
    if (value + available < target || value > target + costOfChange || (waste > bestWaste && isFeeRateHigh)) {
      backtrack = true; // cannot reach the target, overshot it, or already worse than the best
    } else if (weight > maxWeight) {
      backtrack = true;
    } else if (value >= target) {
      const total = waste + (value - target); // the excess goes to the fee: count it as waste
      if (total <= bestWaste) {
        bestWaste = total;
        best = chosen.slice(0, depth);
      }
      backtrack = true;
    }

    if (backtrack) {
      if (depth === 0) break; // every branch explored
      const last = chosen[depth - 1]!;
      // Put back the coins skipped after the last included one, then take the branch without it.
      for (i--; i > last; i--) available += amounts[i]!;
      value -= amounts[i]!;
      waste -= wastes[i]!;
      weight -= weights[i]!;
      depth--;
    } else {
      available -= amounts[i]!;
      // Skip a coin equal (amount and fee) to the previous one when that one was excluded: same subtree.
      if (depth === 0 || i - 1 === chosen[depth - 1] || amounts[i] !== amounts[i - 1] || fees[i] !== fees[i - 1]) {
        chosen[depth++] = i;
        value += amounts[i]!;
        waste += wastes[i]!;
        weight += weights[i]!;
      }
    }
  }
  return best && Array.from(best, (p) => pool[p]!);
}

/** Bitcoin Core's CHANGE_LOWER: SRD aims for at least this much change. */
export const SRD_CHANGE_LOWER = 50_000;

/**
 * Single Random Draw (Bitcoin Core's SelectCoinsSRD): coins in random order until the amount
 * covers target + change fee + 50,000 sat, so the change is never tiny.
 */
export function selectSrd<T extends PoolCoin>(coins: readonly T[], target: number, changeFee: number, maxWeight: number, random: RandomSource): T[] | null {
  const goal = target + changeFee + SRD_CHANGE_LOWER;
  const order = coins.map((_, k) => k);
  const chosen: T[] = [];
  let value = 0;
  let weight = 0;
  // Lazy Fisher-Yates: draw without replacement only as many coins as needed.
  for (let n = 0; n < order.length; n++) {
    const pick = n + random.nextInt(order.length - n);
    const k = order[pick]!;
    order[pick] = order[n]!;
    order[n] = k;
    const c = coins[k]!;
    chosen.push(c);
    value += c.amount;
    weight += c.weight;
    if (weight > maxWeight) return null;
    if (value >= goal) return chosen;
  }
  return null;
}

/** Largest first: the last resort, succeeds whenever the coins cover the target within the weight limit. */
export function selectLargestFirst<T extends PoolCoin>(coins: readonly T[], target: number, maxWeight: number, sorted?: readonly T[]): T[] | null {
  const pool = sorted ?? sortByAmountDescending(coins);
  const chosen: T[] = [];
  let value = 0;
  let weight = 0;
  for (const c of pool) {
    chosen.push(c);
    value += c.amount;
    weight += c.weight;
    if (weight > maxWeight) return null;
    if (value >= target) return chosen;
  }
  return null;
}
