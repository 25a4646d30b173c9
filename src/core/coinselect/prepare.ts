/**
 * Checks a selection request and derives everything the algorithms need: per-coin sizes and
 * fees, the cost of change, the smallest change worth making, and the fixed part of the size.
 */
import { MAX_MONEY } from '../amount.js';
import { compactSizeLength, dustThreshold, inputVsize, inputWeight, isSegwitInput, outputVsize, spendPlanOfInput, type InputSpend } from '../size.js';
import type { SpendPlan } from '../spend-plan.js';
import { feeForVsize, MAX_FEE_RATE, type FeeRate } from './fee-rate.js';
import type { PoolCoin } from './algorithms.js';
import { systemRandom, type RandomSource } from './random.js';
import { CoinSelectionError, type Coin, type Recipient, type SelectionRequest } from './types.js';

export const DEFAULT_LONG_TERM_FEE_RATE: FeeRate = 10_000n;
export const DEFAULT_DISCARD_FEE_RATE: FeeRate = 10_000n;
export const DEFAULT_DUST_RELAY_FEE_RATE: FeeRate = 3_000n;
export const DEFAULT_MAX_WEIGHT = 400_000;
const MAX_INPUT_VSIZE = 100_000;

/**
 * A coin with its sizes and fees worked out; also the algorithms' pool entry (its number fields:
 * `amount` is the selection amount, `fee`/`longTermFee` the same as the bigint ones). Every amount
 * here is below 2^53, so the numbers are exact; the bigint amounts are worked out only when read
 * (for the few coins chosen), since a wallet may offer 100,000 coins per selection.
 */
export class PreparedCoin implements PoolCoin {
  constructor(
    readonly coin: Coin,
    /** What counts toward the target: effective value, or the value when a recipient pays the fee. */
    readonly amount: number,
    readonly fee: number,
    readonly longTermFee: number,
    readonly weight: number,
    /** Weight when no input of the transaction is segwit (no witness section at all). */
    readonly legacyWeight: number,
    readonly segwit: boolean,
    readonly feeSats: bigint,
    readonly longTermFeeSats: bigint,
    /** Value minus the fee to spend it, in sats. */
    readonly effective: number,
    readonly mustUse: boolean,
  ) {}

  get effectiveValue(): bigint {
    return this.coin.value - this.feeSats;
  }

  get selectionAmount(): bigint {
    return BigInt(this.amount);
  }
}

interface InputSize {
  weight: number;
  legacyWeight: number;
  vsize: number;
  segwit: boolean;
}

export interface Prepared {
  /** Shared by selections over the same frozen coin list at the same rates: never changed. */
  coins: readonly PreparedCoin[];
  /** The coins of the list not to select (`exclude`, e.g. held by other pending transactions). */
  excluded: ReadonlySet<PreparedCoin>;
  recipients: Recipient[];
  recipientsSum: bigint;
  recipientScriptLengths: number[];
  changeScript: Uint8Array;
  feeRate: FeeRate;
  subtractFeeFrom: number | null;
  minimumFee: bigint;
  minimumFeeIncrementalRate: FeeRate;
  /** Fee of everything but the inputs (version, locktime, counts, segwit marker, recipient outputs). 0 when a recipient pays the fee. */
  notInputFee: bigint;
  changeFee: bigint;
  costOfChange: bigint;
  minViableChange: bigint;
  dustRelayFeeRate: FeeRate;
  maxWeight: number;
  /** Weight budget left for inputs once the rest of the transaction (with change) is counted. */
  maxInputWeight: number;
  random: RandomSource;
}

const invalid = (message: string) => new CoinSelectionError('invalid_selection_request', message);

function checkRate(rate: unknown, name: string): FeeRate {
  if (typeof rate !== 'bigint' || rate < 0n || rate > MAX_FEE_RATE) throw invalid(`${name} must be a bigint in sat/kvB between 0 and ${MAX_FEE_RATE}`);
  return rate;
}

function checkAmount(value: unknown, name: string, min: bigint): bigint {
  if (typeof value !== 'bigint' || value < min || value > MAX_MONEY) throw invalid(`${name} must be a bigint number of sats between ${min} and ${MAX_MONEY}`);
  return value;
}

/** Sizes and fees per input type and per vsize: many coins share few of them. */
class CoinCosts {
  private readonly sizes = new Map<SpendPlan, InputSize>();
  private readonly fees = new Map<number, { fee: bigint; longTermFee: bigint; feeNumber: number; longTermFeeNumber: number }>();
  constructor(
    private readonly feeRate: FeeRate,
    private readonly longTerm: FeeRate,
  ) {}
  private lastType: InputSpend | undefined;
  private lastSize: InputSize | undefined;
  size(type: InputSpend): InputSize {
    // Callers usually pass one type object for every coin of a wallet: skip the lookup then.
    if (type === this.lastType) return this.lastSize!;
    // Plans of kinds are shared objects (script-kinds' spendPlanOfKind), so one plan is one entry.
    const plan = spendPlanOfInput(type);
    let size = this.sizes.get(plan);
    if (!size) {
      const weight = inputWeight(plan);
      const segwit = isSegwitInput(plan);
      size = { weight, legacyWeight: segwit ? weight : weight - 1, vsize: inputVsize(plan), segwit }; // legacy: no empty stack size byte
      this.sizes.set(plan, size);
    }
    this.lastType = type;
    this.lastSize = size;
    return size;
  }
  fee(vsize: number): { fee: bigint; longTermFee: bigint; feeNumber: number; longTermFeeNumber: number } {
    let fees = this.fees.get(vsize);
    if (!fees) {
      const fee = feeForVsize(this.feeRate, vsize);
      const longTermFee = feeForVsize(this.longTerm, vsize);
      fees = { fee, longTermFee, feeNumber: Number(fee), longTermFeeNumber: Number(longTermFee) };
      this.fees.set(vsize, fees);
    }
    return fees;
  }
}

const coinName = (coin: Coin) => `Coin ${JSON.stringify(coin.id)}`;

function prepareCoin(coin: Coin, costs: CoinCosts, mustUse: boolean, subtractFee: boolean): PreparedCoin {
  if (typeof coin.value !== 'bigint' || coin.value < 0n || coin.value > MAX_MONEY) throw invalid(`${coinName(coin)} value must be a bigint number of sats between 0 and ${MAX_MONEY}`);
  if (typeof coin.confirmed !== 'boolean') throw invalid(`${coinName(coin)} confirmed must be true or false`);
  let size: InputSize;
  if (coin.inputType) {
    size = costs.size(coin.inputType);
  } else if (Number.isInteger(coin.inputVsize) && coin.inputVsize! > 0 && coin.inputVsize! <= MAX_INPUT_VSIZE) {
    // Unknown script: assume it adds the segwit marker, which can only overestimate.
    size = { vsize: coin.inputVsize!, weight: coin.inputVsize! * 4, legacyWeight: coin.inputVsize! * 4, segwit: true };
  } else {
    throw invalid(`${coinName(coin)} needs an inputType or a positive integer inputVsize`);
  }
  const { fee, longTermFee, feeNumber, longTermFeeNumber } = costs.fee(size.vsize);
  const value = Number(coin.value); // at most MAX_MONEY: exact
  const effective = value - feeNumber;
  return new PreparedCoin(coin, subtractFee ? value : effective, feeNumber, longTermFeeNumber, size.weight, size.legacyWeight, size.segwit, fee, longTermFee, effective, mustUse);
}

/**
 * Prepared coins of a frozen list of frozen coins, per fee rates: a wallet offers the same list (up to
 * 100,000 coins) to every selection until its coins change, and preparing them was most of a selection.
 */
const preparedLists = new WeakMap<readonly Coin[], Map<string, readonly PreparedCoin[]>>();

/**
 * Prepared frozen coins by coin object, for the few fee rates used last. When a wallet's coins change (a
 * block), its next list is a new one but holds mostly the same coin objects: their preparation is reused,
 * and only the new coins are prepared. Bounded by rates, since coin objects live as long as their coins.
 */
const preparedByCoin = new Map<string, WeakMap<Coin, PreparedCoin>>();
const RATES_KEPT_BY_COIN = 4;

function preparedCoinsAt(key: string): WeakMap<Coin, PreparedCoin> {
  let byCoin = preparedByCoin.get(key);
  if (byCoin) preparedByCoin.delete(key); // put back last: the most recently used rates stay
  else byCoin = new WeakMap();
  preparedByCoin.set(key, byCoin);
  if (preparedByCoin.size > RATES_KEPT_BY_COIN) preparedByCoin.delete(preparedByCoin.keys().next().value as string);
  return byCoin;
}

function prepareCoins(list: readonly Coin[], feeRate: FeeRate, longTerm: FeeRate, mustUseIds: ReadonlySet<string>, subtractFee: boolean): readonly PreparedCoin[] {
  const reusable = mustUseIds.size === 0 && Object.isFrozen(list);
  const key = `${feeRate}:${longTerm}:${subtractFee}`;
  const known = reusable ? preparedLists.get(list)?.get(key) : undefined;
  if (known) return known;
  const anyMustUse = mustUseIds.size > 0;
  const seen = new Set<string>();
  // Summed as a number: every value is at most MAX_MONEY, so the sum stays exact until it passes
  // MAX_MONEY by far less than 2^53 (checked per coin), and one bigint per coin is spared.
  let coinsTotal = 0;
  let tooMuch = false;
  let allFrozen = reusable;
  const costs = new CoinCosts(feeRate, longTerm);
  // A frozen coin cannot change under its preparation; without must-use coins none is marked.
  const byCoin = reusable ? preparedCoinsAt(key) : undefined;
  const coins = list.map((coin, index) => {
    if (typeof coin.id !== 'string' || coin.id.length === 0) throw invalid(`Coin ${index} needs a non-empty id`);
    if (seen.has(coin.id)) throw invalid(`Coin ${JSON.stringify(coin.id)} is listed twice`);
    seen.add(coin.id);
    let prepared = byCoin?.get(coin);
    if (!prepared) {
      prepared = prepareCoin(coin, costs, anyMustUse && mustUseIds.has(coin.id), subtractFee);
      if (byCoin && Object.isFrozen(coin)) byCoin.set(coin, prepared);
    }
    if (!tooMuch) {
      coinsTotal += Number(coin.value);
      if (coinsTotal > Number(MAX_MONEY)) tooMuch = true;
    }
    if (allFrozen && !Object.isFrozen(coin)) allFrozen = false;
    return prepared;
  });
  if (tooMuch) throw invalid('Coins total more than 21 million BTC');
  for (const id of mustUseIds) if (!seen.has(id)) throw new CoinSelectionError('unknown_coin', `Coin ${JSON.stringify(id)} to spend is not among the available coins`);
  Object.freeze(coins);
  if (allFrozen) {
    // Only lists nobody can change (the list and every coin frozen) are reused.
    let byRates = preparedLists.get(list);
    if (!byRates) preparedLists.set(list, (byRates = new Map()));
    byRates.set(key, coins);
  }
  return coins;
}

/** Each prepared list's coins by id, made when a selection first excludes some: a few ids become coins. */
const byIdLists = new WeakMap<readonly PreparedCoin[], Map<string, PreparedCoin>>();

/**
 * The coins of `coins` whose ids are in `exclude` (ids of no coin of the list are left aside). Working with the
 * coins themselves spares the selection a lookup of every coin's id text in `exclude`.
 */
function excludedCoins(coins: readonly PreparedCoin[], exclude: ReadonlySet<string> | undefined): ReadonlySet<PreparedCoin> {
  const excluded = new Set<PreparedCoin>();
  if (!exclude || exclude.size === 0) return excluded;
  let byId = byIdLists.get(coins);
  if (!byId) byIdLists.set(coins, (byId = new Map(coins.map((c) => [c.coin.id, c]))));
  for (const id of exclude) {
    const coin = byId.get(id);
    if (coin) excluded.add(coin);
  }
  return excluded;
}

export function prepare(request: SelectionRequest): Prepared {
  const options = request.options ?? {};
  const feeRate = checkRate(request.feeRate, 'feeRate');
  const longTerm = checkRate(options.longTermFeeRate ?? DEFAULT_LONG_TERM_FEE_RATE, 'longTermFeeRate');
  const dustRelayFeeRate = checkRate(options.dustRelayFeeRate ?? DEFAULT_DUST_RELAY_FEE_RATE, 'dustRelayFeeRate');
  const discardRequested = checkRate(options.discardFeeRate ?? DEFAULT_DISCARD_FEE_RATE, 'discardFeeRate');
  const discard = discardRequested > dustRelayFeeRate ? discardRequested : dustRelayFeeRate;
  const maxWeight = options.maxWeight ?? DEFAULT_MAX_WEIGHT;
  if (!Number.isInteger(maxWeight) || maxWeight <= 0) throw invalid('maxWeight must be a positive integer');
  const minimumFee = checkAmount(options.minimumFee ?? 0n, 'minimumFee', 0n);
  const minimumFeeIncrementalRate = checkRate(options.minimumFeeIncrementalRate ?? 0n, 'minimumFeeIncrementalRate');

  if (!Array.isArray(request.recipients) || request.recipients.length === 0) throw invalid('At least one recipient is required');
  if (!(request.changeScript instanceof Uint8Array)) throw invalid('changeScript must be bytes');
  const recipients = request.recipients.map((r, i) => {
    if (!(r.script instanceof Uint8Array)) throw invalid(`Recipient ${i} script must be bytes`);
    checkAmount(r.value, `Recipient ${i} value`, 1n);
    const dust = dustThreshold(r.script, dustRelayFeeRate);
    if (r.value < dust) throw new CoinSelectionError('amount_below_dust', `Recipient ${i} amount ${r.value} sat is below the dust limit of its output type (${dust} sat)`);
    return { script: r.script, value: r.value };
  });
  const recipientsSum = recipients.reduce((sum, r) => sum + r.value, 0n);
  if (recipientsSum > MAX_MONEY) throw invalid('Recipients total more than 21 million BTC');

  const subtractFeeFrom = options.subtractFeeFrom ?? null;
  if (subtractFeeFrom !== null && (!Number.isInteger(subtractFeeFrom) || subtractFeeFrom < 0 || subtractFeeFrom >= recipients.length)) {
    throw invalid(`subtractFeeFrom must be the index of a recipient (0 to ${recipients.length - 1})`);
  }

  const mustUseIds = new Set(options.mustUse ?? []);
  for (const id of options.exclude ?? []) if (mustUseIds.has(id)) throw new CoinSelectionError('unknown_coin', `Coin ${JSON.stringify(id)} to spend is excluded`);
  const coins = prepareCoins(request.coins, feeRate, longTerm, mustUseIds, subtractFeeFrom !== null);

  const recipientScriptLengths = recipients.map((r) => r.script.length);
  const outputsVsize = recipientScriptLengths.reduce((sum, len) => sum + outputVsize(len), 0);
  // version 4, locktime 4, input count 1 (more is settled exactly later), output count, segwit marker and flag rounded up to 1.
  const fixedVsize = 4 + 4 + 1 + compactSizeLength(recipients.length) + 1 + outputsVsize;
  const notInputFee = subtractFeeFrom === null ? feeForVsize(feeRate, fixedVsize) : 0n;
  const changeOutputVsize = outputVsize(request.changeScript);
  const changeFee = feeForVsize(feeRate, changeOutputVsize);
  const changeSpendFee = feeForVsize(discard, inputVsize(request.changeInputType));
  const changeDust = dustThreshold(request.changeScript, discard);
  const minViableChange = changeSpendFee + 1n > changeDust ? changeSpendFee + 1n : changeDust;
  const maxInputWeight = maxWeight - (fixedVsize + changeOutputVsize + 2) * 4; // +2: output count may grow to 3 bytes

  return {
    coins,
    excluded: excludedCoins(coins, options.exclude),
    recipients,
    recipientsSum,
    recipientScriptLengths,
    changeScript: request.changeScript,
    feeRate,
    subtractFeeFrom,
    minimumFee,
    minimumFeeIncrementalRate,
    notInputFee,
    changeFee,
    costOfChange: changeFee + changeSpendFee,
    minViableChange,
    dustRelayFeeRate,
    maxWeight,
    maxInputWeight,
    random: options.random ?? systemRandom(),
  };
}
