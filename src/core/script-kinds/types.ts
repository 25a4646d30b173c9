/** What a script kind provides: one entry of the table in `index.ts`. */
import type { DescriptorType } from '../descriptor/descriptor.js';
import type { KeyExpression } from '../descriptor/key-expression.js';
import type { SpendPlan } from '../spend-plan.js';

/** The scripts of one output. */
export interface OutputScripts {
  readonly scriptPubKey: Uint8Array;
  /** P2SH redeem script (sh-wpkh, sh-wsh-*, sh-*). */
  readonly redeemScript?: Uint8Array;
  /** P2WSH witness script (wsh-*, sh-wsh-*). */
  readonly witnessScript?: Uint8Array;
}

/** The address family of a kind's outputs, as wallet details show it. */
export type AddressType = 'bech32' | 'bech32m' | 'p2sh-segwit' | 'legacy';

export interface ScriptKind {
  /** The kind's name: the descriptor type and the wallet policy type of the API. */
  readonly type: DescriptorType;
  /** Script expressions of the descriptor text, outermost first: `sh(wsh(sortedmulti(...)))` is ['sh', 'wsh', 'sortedmulti']. */
  readonly expressions: readonly string[];
  /** True for k-of-n kinds: the innermost expression takes the threshold, then the keys. */
  readonly multisig: boolean;
  /** The most keys a wallet policy of this kind may have (one for single-key kinds). */
  readonly maxKeys: number;
  readonly addressType: AddressType;
  /** Refuses keys the kind cannot hold (throws DescriptorError), beyond what the descriptor grammar checks. */
  readonly checkKeys?: (keys: readonly KeyExpression[]) => void;
  /**
   * The scripts of one output from its keys (descriptor order). Absent for taproot: its output
   * keys are tweaked in batches over a range (descriptor/derive.ts).
   */
  readonly outputScripts?: (threshold: number, keys: readonly Uint8Array[]) => OutputScripts;
  /** The spend plan of the kind's outputs with `keyCount` keys of which `threshold` must sign. */
  readonly spendPlan: (threshold: number, keyCount: number) => SpendPlan;
}
