/** Coin selection: public API. */
export { selectCoins } from './select.js';
export { feeForVsize, formatFeeRate, parseFeeRate, MAX_FEE_RATE, type FeeRate } from './fee-rate.js';
export { seededRandom, systemRandom, type RandomSource } from './random.js';
export {
  DEFAULT_DISCARD_FEE_RATE,
  DEFAULT_DUST_RELAY_FEE_RATE,
  DEFAULT_LONG_TERM_FEE_RATE,
  DEFAULT_MAX_WEIGHT,
} from './prepare.js';
export { BNB_MAX_TRIES, SRD_CHANGE_LOWER } from './algorithms.js';
export {
  CoinSelectionError,
  InsufficientFundsError,
  type Coin,
  type CoinSelectionErrorCode,
  type Recipient,
  type SelectionAlgorithm,
  type SelectionOptions,
  type SelectionRequest,
  type SelectionResult,
} from './types.js';
