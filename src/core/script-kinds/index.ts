/**
 * The script kinds: one table entry per descriptor shape the service supports. Everything that
 * differs between shapes (descriptor text, output scripts, spend plan) is in the entry; the
 * rest of core reads the entry or its spend plan. Adding a kind: see docs/extending.md.
 */
import type { DescriptorType } from '../descriptor/descriptor.js';
import type { SpendPlan } from '../spend-plan.js';
import { pkh } from './pkh.js';
import { shMulti, shSortedMulti } from './sh-multi.js';
import { shWpkh } from './sh-wpkh.js';
import { shWshMulti, shWshSortedMulti } from './sh-wsh-multi.js';
import { tr } from './tr.js';
import type { ScriptKind } from './types.js';
import { wpkh } from './wpkh.js';
import { wshMulti, wshSortedMulti } from './wsh-multi.js';

export type { AddressType, OutputScripts, ScriptKind } from './types.js';
export { multisigScript } from './multisig.js';

export const SCRIPT_KINDS: Readonly<Record<DescriptorType, ScriptKind>> = {
  wpkh,
  'sh-wpkh': shWpkh,
  pkh,
  tr,
  'wsh-sortedmulti': wshSortedMulti,
  'wsh-multi': wshMulti,
  'sh-wsh-sortedmulti': shWshSortedMulti,
  'sh-wsh-multi': shWshMulti,
  'sh-sortedmulti': shSortedMulti,
  'sh-multi': shMulti,
};

export const scriptKind = (type: DescriptorType): ScriptKind => SCRIPT_KINDS[type];

/** The kind whose descriptor text has these script expressions (outermost first), if any. */
export function kindOfExpressions(expressions: readonly string[]): ScriptKind | undefined {
  const text = expressions.join('(');
  return Object.values(SCRIPT_KINDS).find((kind) => kind.expressions.join('(') === text);
}

const plans = new Map<string, SpendPlan>();

/**
 * The spend plan of a kind with `keyCount` keys and `threshold`; the same object for the same
 * arguments, so callers may compare plans by identity.
 */
export function spendPlanOfKind(type: DescriptorType, threshold: number, keyCount: number): SpendPlan {
  const key = `${type}:${threshold}:${keyCount}`;
  let plan = plans.get(key);
  if (!plan) {
    plan = SCRIPT_KINDS[type].spendPlan(threshold, keyCount);
    plans.set(key, plan);
  }
  return plan;
}

/** The spend plan of a descriptor's outputs (key indexes in the descriptor's key order). */
export const spendPlanOf = (descriptor: { readonly type: DescriptorType; readonly threshold: number; readonly keys: readonly unknown[] }): SpendPlan =>
  spendPlanOfKind(descriptor.type, descriptor.threshold, descriptor.keys.length);
