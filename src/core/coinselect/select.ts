/**
 * Coin selection as Bitcoin Core's wallet does it: coins in eligibility tiers (confirmed, then
 * own unconfirmed change, then any unconfirmed), Branch and Bound for a changeless match, Single
 * Random Draw, largest-first as the last resort; the candidate with the least waste wins. Then
 * the exact settlement in bigint: signed size, fee, change or no change, fee from a recipient.
 */
import { compactSizeLength, dustThreshold, outputVsize } from '../size.js';
import { selectBnB, selectLargestFirst, selectSrd, sortByAmountDescending } from './algorithms.js';
import { feeForVsize } from './fee-rate.js';
import { prepare, type Prepared, type PreparedCoin } from './prepare.js';
import {
  CoinSelectionError,
  InsufficientFundsError,
  type Recipient,
  type SelectionAlgorithm,
  type SelectionRequest,
  type SelectionResult,
} from './types.js';

/** Core's eligibility filters, most conservative first. */
const TIERS: ((c: PreparedCoin) => boolean)[] = [
  (c) => c.coin.confirmed,
  (c) => c.coin.confirmed || c.coin.isOwnChange === true,
  () => true,
];

interface Choice {
  coins: PreparedCoin[];
  algorithm: SelectionAlgorithm;
  waste: bigint;
  /** The widest eligibility tier the choice needed (an index into TIERS; -1 for must-use coins alone). */
  tier: number;
}

/** Bitcoin Core's waste: fee now minus fee later for every input, plus the cost of change or the excess given up. */
function waste(p: Prepared, coins: readonly PreparedCoin[], target: bigint): bigint {
  let total = 0n;
  let amount = 0n;
  for (const c of coins) {
    total += c.feeSats - c.longTermFeeSats;
    amount += c.selectionAmount;
  }
  const change = p.subtractFeeFrom === null ? amount - target - p.changeFee : amount - target;
  return total + (change >= p.minViableChange ? p.costOfChange : amount - target);
}

/**
 * Per prepared list (shared when a frozen coin list is reused): its must-use coins, its optional coins with
 * how many of them each tier admits, and those sorted by amount.
 */
const splitLists = new WeakMap<readonly PreparedCoin[], { preset: PreparedCoin[]; optional: PreparedCoin[]; tierSizes: number[] }>();
const sortedLists = new WeakMap<readonly PreparedCoin[], PreparedCoin[]>();

/** A coin the algorithms may pick: not must-use, and worth more than the fee to spend it. */
const isOptional = (c: PreparedCoin): boolean => !c.mustUse && c.amount > 0 && c.effective > 0;

/** The must-use coins, and the optional ones. */
function splitOf(coins: readonly PreparedCoin[]): { preset: PreparedCoin[]; optional: PreparedCoin[]; tierSizes: number[] } {
  let split = splitLists.get(coins);
  if (!split) {
    const optional = coins.filter(isOptional);
    split = { preset: coins.filter((c) => c.mustUse), optional, tierSizes: tierSizesOf(optional) };
    splitLists.set(coins, split);
  }
  return split;
}

/** How many coins each tier admits: a tier admitting as many as the one before holds the same coins (tiers only widen). */
function tierSizesOf(coins: Iterable<PreparedCoin>): number[] {
  const sizes = TIERS.map(() => 0);
  for (const c of coins) for (let t = 0; t < TIERS.length; t++) if (TIERS[t]!(c)) sizes[t]! += 1;
  return sizes;
}

/**
 * The optional coins less the excluded ones, in sortByAmountDescending's order (amount, then position): sorting
 * the whole list once and leaving coins out keeps the same order as sorting what is left.
 */
function sortedOptional(base: PreparedCoin[], excluded: ReadonlySet<PreparedCoin>): PreparedCoin[] {
  let sorted = sortedLists.get(base);
  if (!sorted) sortedLists.set(base, (sorted = sortByAmountDescending(base)));
  return excluded.size > 0 ? sorted.filter((c) => !excluded.has(c)) : sorted;
}

/** The tiers' sizes of a list without its excluded optional coins. */
function lessExcluded(tierSizes: readonly number[], excluded: ReadonlySet<PreparedCoin>): number[] {
  const gone = tierSizesOf([...excluded].filter(isOptional));
  return tierSizes.map((size, t) => size - gone[t]!);
}

/** Picks coins covering `target` (a selection amount) on top of the must-use coins. */
function choose(p: Prepared, target: bigint): Choice {
  const { preset, optional: base, tierSizes: baseTierSizes } = splitOf(p.coins);
  const presetAmount = preset.reduce((sum, c) => sum + c.selectionAmount, 0n);
  const remaining = target - presetAmount;
  if (preset.length > 0 && remaining <= 0n) return { coins: preset, algorithm: 'manual', waste: waste(p, preset, target), tier: -1 };

  const optional = p.excluded.size > 0 ? base.filter((c) => !p.excluded.has(c)) : base;
  // Counted first: a tier admitting as many coins as the one before is skipped without building its list.
  const tierSizes = optional === base ? baseTierSizes : lessExcluded(baseTierSizes, p.excluded);
  let weightExceeded = false;
  let previousSize = -1;
  for (const [t, tier] of TIERS.entries()) {
    if (tierSizes[t] === previousSize) continue; // same coins as the tier before
    previousSize = tierSizes[t]!;
    const eligible = previousSize === optional.length ? optional : optional.filter(tier);
    const pool = eligible;
    let available = 0;
    for (const c of pool) available += c.amount;
    if (BigInt(available) < remaining) continue;
    const goal = Number(remaining);
    const budget = p.maxInputWeight - preset.reduce((sum, c) => sum + c.weight, 0);

    // Every optional coin eligible: the order by amount comes from the list's sorted optional coins.
    const sorted = eligible === optional ? sortedOptional(base, p.excluded) : undefined;
    const candidates: { selection: PreparedCoin[]; algorithm: SelectionAlgorithm }[] = [];
    if (p.subtractFeeFrom === null) {
      const bnb = selectBnB(pool, goal, Number(p.costOfChange), budget, undefined, sorted);
      if (bnb) candidates.push({ selection: bnb, algorithm: 'bnb' });
    }
    const srd = selectSrd(pool, goal, Number(p.changeFee), budget, p.random);
    if (srd) candidates.push({ selection: srd, algorithm: 'srd' });
    if (candidates.length === 0) {
      const largest = selectLargestFirst(pool, goal, budget, sorted);
      if (largest) candidates.push({ selection: largest, algorithm: 'largest-first' });
    }
    if (candidates.length === 0) {
      weightExceeded = true;
      continue;
    }
    let best: Choice | null = null;
    for (const { selection, algorithm } of candidates) {
      const coins = [...preset, ...selection];
      const choice = { coins, algorithm, waste: waste(p, coins, target), tier: t };
      // Least waste; on a tie, more inputs (Core's ChooseSelectionResult: consolidate while it is free).
      if (!best || choice.waste < best.waste || (choice.waste === best.waste && coins.length > best.coins.length)) best = choice;
    }
    return best!;
  }
  if (weightExceeded) {
    throw new CoinSelectionError('max_weight_exceeded', 'The coins needed would make the transaction larger than the standard size limit');
  }
  const all = optional.reduce((sum, c) => sum + c.selectionAmount, 0n);
  throw new InsufficientFundsError(remaining - all);
}

/** Each prepared coin's position in its list, built on first use per list (shared lists are settled many times). */
const positionLists = new WeakMap<readonly PreparedCoin[], Map<PreparedCoin, number>>();

/** The chosen coins as the caller listed them, must-use coins first. */
function inListOrder(p: Prepared, chosen: readonly PreparedCoin[]): PreparedCoin[] {
  let positions = positionLists.get(p.coins);
  if (!positions) positionLists.set(p.coins, (positions = new Map(p.coins.map((c, i) => [c, i]))));
  const at = positions;
  return [...chosen].sort((a, b) => Number(b.mustUse) - Number(a.mustUse) || at.get(a)! - at.get(b)!);
}

/** Exact weight of the signed transaction with these inputs and outputs of these script lengths. */
function transactionWeight(inputs: readonly PreparedCoin[], scriptLengths: readonly number[]): number {
  const segwit = inputs.some((c) => c.segwit);
  let base = 4 + compactSizeLength(inputs.length) + compactSizeLength(scriptLengths.length) + 4;
  for (const len of scriptLengths) base += outputVsize(len);
  let weight = base * 4 + (segwit ? 2 : 0);
  for (const c of inputs) weight += segwit ? c.weight : c.legacyWeight;
  return weight;
}

/** The fee floor besides the rate: minimumFee, plus the incremental relay fee of this size for a replacement. */
const minimumFeeFor = (p: Prepared, vsize: number): bigint =>
  p.minimumFee + (p.minimumFeeIncrementalRate > 0n ? feeForVsize(p.minimumFeeIncrementalRate, vsize) : 0n);

type Settlement = { result: SelectionResult } | { shortfall: bigint };

/** Works out fee, change and recipient amounts exactly for the chosen coins. */
function settle(p: Prepared, choice: Choice): Settlement {
  const inputs = inListOrder(p, choice.coins);
  const totalIn = inputs.reduce((sum, c) => sum + c.coin.value, 0n);
  const feeAt = (weight: number) => {
    const vsize = Math.ceil(weight / 4);
    const fee = feeForVsize(p.feeRate, vsize);
    const floor = minimumFeeFor(p, vsize);
    return { weight, vsize, fee: fee > floor ? fee : floor };
  };
  const without = feeAt(transactionWeight(inputs, p.recipientScriptLengths));
  const withChange = feeAt(transactionWeight(inputs, [...p.recipientScriptLengths, p.changeScript.length]));
  const recipients: Recipient[] = p.recipients.map((r) => ({ ...r }));

  let change: bigint | null;
  let size: { weight: number; vsize: number; fee: bigint };
  let fee: bigint;
  if (p.subtractFeeFrom !== null) {
    const excess = totalIn - p.recipientsSum;
    if (excess < 0n) return { shortfall: -excess };
    change = excess >= p.minViableChange ? excess : null;
    size = change === null ? without : withChange;
    fee = change === null ? size.fee + excess : size.fee; // leftover too small for change goes to the fee
    const payer = recipients[p.subtractFeeFrom]!;
    const reduced = payer.value - size.fee;
    const dust = dustThreshold(payer.script, p.dustRelayFeeRate);
    if (reduced < dust) {
      throw new CoinSelectionError(
        'amount_below_dust',
        `Recipient ${p.subtractFeeFrom} amount ${payer.value} sat minus the fee ${size.fee} sat leaves ${reduced} sat, below the dust limit of its output type (${dust} sat)`,
      );
    }
    payer.value = reduced;
  } else {
    const leftover = totalIn - p.recipientsSum - withChange.fee;
    if (leftover >= p.minViableChange) {
      change = leftover;
      size = withChange;
      fee = withChange.fee;
    } else {
      change = null;
      size = without;
      fee = totalIn - p.recipientsSum; // leftover too small for change goes to the fee
      if (fee < without.fee) return { shortfall: without.fee - fee };
    }
  }
  if (size.weight > p.maxWeight) {
    throw new CoinSelectionError('max_weight_exceeded', 'The coins needed would make the transaction larger than the standard size limit');
  }
  const outputs = recipients.reduce((sum, r) => sum + r.value, 0n) + (change ?? 0n);
  // Guards on the money invariants: a failure here is a bug, never something to send.
  if (totalIn !== outputs + fee || fee < feeForVsize(p.feeRate, size.vsize) || fee < minimumFeeFor(p, size.vsize) || (change !== null && change < 0n)) {
    throw new Error('coin selection broke a money invariant');
  }
  return {
    result: { inputs: inputs.map((c) => c.coin), recipients, change, fee, vsize: size.vsize, weight: size.weight, algorithm: choice.algorithm, waste: choice.waste },
  };
}

/**
 * Selects coins paying `recipients` at `feeRate` (sat/kvB), with change to `changeScript` when
 * worth it. Guarantees: inputs = outputs + fee exactly; fee >= ceil(feeRate * vsize / 1000) and
 * >= options.minimumFee (+ the incremental rate times vsize); every must-use coin spent; no coin twice; confirmed coins preferred.
 * Throws InsufficientFundsError (with the sats missing), or CoinSelectionError for a bad request,
 * a recipient below dust (also after fee subtraction), or a selection over the weight limit.
 */
export function selectCoins(request: SelectionRequest): SelectionResult {
  if (!request || !Array.isArray(request.coins)) throw new CoinSelectionError('invalid_selection_request', 'coins must be a list');
  const p = prepare(request);
  const baseTarget = p.recipientsSum + p.notInputFee;
  // Each round that comes up short (exact size above the estimate, or a minimum fee) raises the
  // target by the exact shortfall; the target only grows, so this ends in success or insufficient funds.
  let needed = 0n; // the shortfalls so far: no selection needs less
  let extra = 0n; // `needed`, grown geometrically after a few rounds so that a run of small shortfalls ends quickly
  let tier = -1;
  for (let round = 1; ; round++) {
    let choice = extra > needed ? grownChoice(p, baseTarget + extra, tier) : null;
    if (!choice) {
      extra = needed;
      try {
        choice = choose(p, baseTarget + needed);
      } catch (error) {
        const whole = error instanceof InsufficientFundsError && needed > 0n ? settleWholeTier(p, baseTarget + needed, TIERS.length) : null;
        if (whole) return whole;
        throw error;
      }
    }
    if (needed > 0n && choice.tier > 0) {
      const whole = settleWholeTier(p, baseTarget + needed, choice.tier);
      if (whole) return whole;
    }
    tier = choice.tier;
    const settlement = settle(p, choice);
    if ('result' in settlement) return settlement.result;
    needed += settlement.shortfall;
    extra += settlement.shortfall + (round > 4 ? extra : 0n);
  }
}

/**
 * The settlement spending every eligible coin of the narrowest tier below `belowTier` that can pay, or null when none
 * can. Targets count each input's fee at the fee rate, but a minimum fee (a replacement's) does not grow with the
 * inputs, and the shortfalls of earlier rounds were measured on other coins: the target can ask more of a tier than
 * its coins need. Before reaching for less confirmed coins, or saying the wallet cannot pay, the whole tier is tried.
 */
function settleWholeTier(p: Prepared, target: bigint, belowTier: number): SelectionResult | null {
  const { preset, optional } = splitOf(p.coins);
  const candidates = optional.filter((c) => !p.excluded.has(c));
  for (const [t, tier] of TIERS.slice(0, belowTier).entries()) {
    const coins = [...preset, ...candidates.filter(tier)];
    let settlement: Settlement;
    try {
      settlement = settle(p, { coins, algorithm: 'largest-first', waste: waste(p, coins, target), tier: t });
    } catch (error) {
      if (error instanceof CoinSelectionError) return null; // over the weight limit: a wider tier is no better
      throw error;
    }
    if ('result' in settlement) return settlement.result;
  }
  return null;
}

/**
 * The choice for a target grown past the shortfalls, or null when growing overshot: it would reach wider (less
 * confirmed) coins than the last round, or more than the wallet holds or a transaction can carry. Confirmed coins stay preferred, and a wallet
 * that can pay is never told it cannot.
 */
function grownChoice(p: Prepared, target: bigint, lastTier: number): Choice | null {
  try {
    const choice = choose(p, target);
    return choice.tier <= lastTier ? choice : null;
  } catch (error) {
    if (error instanceof CoinSelectionError) return null; // out of funds or over the weight limit: the exact target decides
    throw error;
  }
}
