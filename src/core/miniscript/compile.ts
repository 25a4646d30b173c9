/**
 * The service's simple policy (a primary path and timelocked recovery paths) compiled to
 * miniscript, in the forms wallets such as Liana use:
 * - wsh: `or_d(<primary>, and_v(v:<recovery keys>, older(n)))`, several recoveries joined by
 *   `or_i`; a recovery that reuses the primary's keys becomes one `thresh` (3-of-3 decaying to
 *   2-of-3: `thresh(3,pk(A),s:pk(B),s:pk(C),sln:older(n))`);
 * - tr: the primary's key as internal key when it is a single key, else BIP341's unspendable
 *   point H; one leaf per other path, `multi_a` for several keys.
 */
import { assertSane } from './analyse.js';
import { MiniscriptError } from './errors.js';
import { parseMiniscript } from './parse.js';

export interface PolicyPath {
  readonly threshold: number;
  /** Keys as they will appear in the descriptor (hex or key expressions); distinct within a path. */
  readonly keys: readonly string[];
  /** Relative lock in blocks: older(n), 1..65535. */
  readonly older?: number;
  /** Absolute lock: after(n), a block height 1..499,999,999. */
  readonly after?: number;
}

export interface SimplePolicy {
  readonly script: 'wsh' | 'tr';
  readonly paths: readonly PolicyPath[];
}

export type CompiledPolicy =
  | { readonly script: 'wsh'; readonly miniscript: string; readonly descriptor: string }
  | { readonly script: 'tr'; readonly internalKey: string; readonly leaves: readonly string[]; readonly descriptor: string };

/** BIP341's provably unspendable internal key H (x-only). */
export const NUMS_H = '50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0';

const fail = (code: string, message: string) => new MiniscriptError(code, message);

function checkPath(p: PolicyPath, i: number): void {
  const where = `Path ${i + 1}`;
  if (p.keys.length === 0) throw fail('invalid_policy', `${where} has no keys`);
  if (new Set(p.keys).size !== p.keys.length) throw fail('duplicate_key', `${where} lists a key twice`);
  if (!Number.isInteger(p.threshold) || p.threshold < 1 || p.threshold > p.keys.length) {
    throw fail('invalid_threshold', `${where}: threshold must lie within 1..${p.keys.length}`);
  }
  if (p.older !== undefined && p.after !== undefined) throw fail('invalid_policy', `${where} has both a relative and an absolute lock`);
  if (p.older !== undefined && (!Number.isInteger(p.older) || p.older < 1 || p.older > 0xffff)) {
    throw fail('invalid_timelock', `${where}: a relative lock in blocks must lie within 1..65535`);
  }
  if (p.after !== undefined && (!Number.isInteger(p.after) || p.after < 1 || p.after >= 500_000_000)) {
    throw fail('invalid_timelock', `${where}: an absolute lock must be a block height within 1..499999999`);
  }
}

const lockOf = (p: PolicyPath) => (p.older !== undefined ? `older(${p.older})` : p.after !== undefined ? `after(${p.after})` : undefined);

/** The primary path first, then the recoveries; exactly one path without a lock. */
function splitPaths(policy: SimplePolicy): { primary: PolicyPath; recoveries: PolicyPath[] } {
  if (policy.paths.length === 0) throw fail('invalid_policy', 'A policy needs at least one path');
  policy.paths.forEach(checkPath);
  const unlocked = policy.paths.filter((p) => lockOf(p) === undefined);
  if (unlocked.length !== 1) throw fail('invalid_policy', `A policy needs exactly one path without a lock (the primary), got ${unlocked.length}`);
  return { primary: unlocked[0]!, recoveries: policy.paths.filter((p) => lockOf(p) !== undefined) };
}

function chain(exprs: string[]): string {
  return exprs.length === 1 ? exprs[0]! : `or_i(${exprs[0]},${chain(exprs.slice(1))})`;
}

/** A recovery that shares keys with the primary, as one thresh with the primary (or a refusal). */
function sharedThresh(primary: PolicyPath, r: PolicyPath): string {
  const extra = r.keys.filter((k) => !primary.keys.includes(k));
  if (!primary.keys.every((k) => r.keys.includes(k)) || r.threshold > primary.threshold) {
    throw fail('unsupported_policy', 'A recovery path that reuses primary keys must include all of them with a threshold no higher than the primary; otherwise give each path its own keys (e.g. another derivation path)');
  }
  if (extra.length === 0 && r.threshold === primary.threshold) {
    throw fail('invalid_policy', 'A recovery path with the primary\'s keys and threshold allows nothing the primary does not');
  }
  const lock = lockOf(r)!;
  const subs = [
    ...primary.keys.map((k, i) => (i === 0 ? `pk(${k})` : `s:pk(${k})`)),
    ...extra.map((k) => `a:and_n(pk(${k}),n:${lock})`),
    ...Array<string>(primary.threshold - r.threshold).fill(`sln:${lock}`),
  ];
  return `thresh(${primary.threshold},${subs.join(',')})`;
}

function compileWsh(primary: PolicyPath, recoveries: PolicyPath[]): string {
  const keysOf = (p: PolicyPath, verify: boolean) =>
    p.keys.length === 1 ? (verify ? `v:pkh(${p.keys[0]})` : `pk(${p.keys[0]})`) : `${verify ? 'v:' : ''}multi(${p.threshold},${p.keys.join(',')})`;
  const shared = recoveries.filter((r) => r.keys.some((k) => primary.keys.includes(k)));
  if (shared.length > 1) throw fail('unsupported_policy', 'Only one recovery path may reuse the primary path\'s keys; give the others their own keys');
  const separate = recoveries.filter((r) => !shared.includes(r));
  const head = shared.length === 1 ? sharedThresh(primary, shared[0]!) : keysOf(primary, false);
  if (separate.length === 0) return head;
  const tail = chain(separate.map((r) => `and_v(${keysOf(r, true)},${lockOf(r)})`));
  // or_d needs a primary that dissatisfies with no signature choice ('e'); a thresh with lock parts does not.
  return shared.length === 1 && primary.threshold > shared[0]!.threshold ? `or_i(${head},${tail})` : `or_d(${head},${tail})`;
}

function leafOf(p: PolicyPath): string {
  const keys = p.keys.length === 1 ? `pk(${p.keys[0]})` : `multi_a(${p.threshold},${p.keys.join(',')})`;
  const lock = lockOf(p);
  if (!lock) return keys;
  return p.keys.length === 1 ? `and_v(v:pk(${p.keys[0]}),${lock})` : `and_v(v:${keys},${lock})`;
}

/** `{A,{B,C}}`-style tree text: the first leaf alone on one side, the rest balanced. */
export function tapTreeText(leaves: readonly string[]): string {
  if (leaves.length === 1) return leaves[0]!;
  const balanced = (list: readonly string[]): string => {
    if (list.length === 1) return list[0]!;
    const half = Math.ceil(list.length / 2);
    return `{${balanced(list.slice(0, half))},${balanced(list.slice(half))}}`;
  };
  return `{${leaves[0]},${balanced(leaves.slice(1))}}`;
}

export function compilePolicy(policy: SimplePolicy): CompiledPolicy {
  const { primary, recoveries } = splitPaths(policy);
  if (policy.script === 'wsh') {
    const miniscript = compileWsh(primary, recoveries);
    assertSane(parseMiniscript(miniscript, 'wsh'), 'wsh');
    return { script: 'wsh', miniscript, descriptor: `wsh(${miniscript})` };
  }
  if (policy.script !== 'tr') throw fail('invalid_policy', 'The script must be wsh or tr');
  const keyPath = primary.keys.length === 1;
  const internalKey = keyPath ? primary.keys[0]! : NUMS_H;
  const leaves = [...(keyPath ? [] : [primary]), ...recoveries].map(leafOf);
  leaves.forEach((leaf) => assertSane(parseMiniscript(leaf, 'tapscript'), 'tapscript'));
  const descriptor = leaves.length === 0 ? `tr(${internalKey})` : `tr(${internalKey},${tapTreeText(leaves)})`;
  return { script: 'tr', internalKey, leaves, descriptor };
}
