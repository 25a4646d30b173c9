/** Plain-data inputs and outputs of coin selection, and its typed errors. */
import { CoreError } from '../errors.js';
import type { InputSpend } from '../size.js';
import type { FeeRate } from './fee-rate.js';
import type { RandomSource } from './random.js';

/** A spendable coin. Give either `inputType` (preferred: exact signed size) or `inputVsize`. */
export interface Coin {
  /** Caller's identifier, e.g. "txid:vout". Unique within one request. */
  id: string;
  value: bigint;
  /** How the coin will be spent: its spend plan (or a classic input type), read for its signed size. */
  inputType?: InputSpend;
  /** Virtual size of the signed input, when `inputType` is not given. */
  inputVsize?: number;
  /** In a block (at least one confirmation): the most conservative tier takes only these. */
  confirmed: boolean;
  /** An output of the wallet's own transaction back to itself (change): spendable unconfirmed sooner. */
  isOwnChange?: boolean;
}

export interface Recipient {
  script: Uint8Array;
  value: bigint;
}

export interface SelectionOptions {
  /** Index of the recipient that pays the whole fee (the fee is taken from its amount). */
  subtractFeeFrom?: number;
  /** Ids of coins that must all be spent (coin control, e.g. the inputs of a transaction being replaced). */
  mustUse?: readonly string[];
  /**
   * Ids of coins of the list never to select (e.g. held by other pending transactions): the same as leaving
   * them out of `coins`, but a frozen list of frozen coins stays the same list, whose preparation is reused.
   */
  exclude?: ReadonlySet<string>;
  /** The fee is at least this many satoshis (BIP125 replacements: the fees of the transactions replaced). */
  minimumFee?: bigint;
  /**
   * With minimumFee, the fee must also exceed it by this rate times the new size (BIP125 rule 4:
   * the replacement pays for its own relay at the incremental relay fee, Core's default 1 sat/vB = 1000n).
   */
  minimumFeeIncrementalRate?: FeeRate;
  /** Rate at which inputs are expected to be spendable later (waste metric). Default 10 sat/vB, Core's consolidatefeerate. */
  longTermFeeRate?: FeeRate;
  /** Rate at which dust change is valued (Core's discardfee). Default 10 sat/vB, never below the dust relay fee. */
  discardFeeRate?: FeeRate;
  /** Dust relay fee (Core's dustrelayfee). Default 3 sat/vB. */
  dustRelayFeeRate?: FeeRate;
  /** Largest weight of the signed transaction. Default 400,000 (Core's standardness limit). */
  maxWeight?: number;
  /** Random source for the randomised algorithms; seed it in tests. Default: cryptographically seeded. */
  random?: RandomSource;
}

export interface SelectionRequest {
  coins: readonly Coin[];
  recipients: readonly Recipient[];
  changeScript: Uint8Array;
  /** How a change output would later be spent (cost of change). */
  changeInputType: InputSpend;
  /** sat/kvB (1 sat/vB = 1000n). */
  feeRate: FeeRate;
  options?: SelectionOptions;
}

export type SelectionAlgorithm = 'bnb' | 'srd' | 'largest-first' | 'manual';

export interface SelectionResult {
  /** Chosen coins: must-use coins first, each once. */
  inputs: Coin[];
  /** Recipients in request order, amounts after any fee subtraction. */
  recipients: Recipient[];
  /** Change amount, or null when there is no change output (leftover below the change threshold went to the fee). */
  change: bigint | null;
  fee: bigint;
  /** Estimated virtual size of the signed transaction (with the change output when there is one). */
  vsize: number;
  weight: number;
  algorithm: SelectionAlgorithm;
  /** Bitcoin Core's waste metric of the chosen selection, in sats. */
  waste: bigint;
}

export type CoinSelectionErrorCode =
  | 'invalid_selection_request'
  | 'unknown_coin'
  | 'amount_below_dust'
  | 'insufficient_funds'
  | 'max_weight_exceeded';

export class CoinSelectionError extends CoreError {
  declare readonly code: CoinSelectionErrorCode;
  constructor(code: CoinSelectionErrorCode, message: string) {
    super(code, message);
  }
}

/** Not enough funds, including the fee. `missing` is how many more sats of spendable value would be needed. */
export class InsufficientFundsError extends CoinSelectionError {
  constructor(readonly missing: bigint) {
    super('insufficient_funds', `Insufficient funds: ${missing} sat more needed, including the fee`);
  }
}
