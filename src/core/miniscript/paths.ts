/**
 * Spending paths of a miniscript: each distinct way to satisfy it (who signs, which timelock,
 * what else it needs) and the largest witness that way can need, as items bottom first. Built
 * from the tree: every fragment combines its subs' satisfactions and its canonical (signature-free)
 * dissatisfactions the way Core's non-malleable satisfier would lay them out.
 */
import type { SignerThreshold } from '../spend-plan.js';
import { MiniscriptError } from './errors.js';
import { SEQUENCE_TYPE_FLAG, LOCKTIME_THRESHOLD, type MiniscriptNode, type ScriptContext } from './node.js';

export interface MiniscriptPath {
  /** Key indexes point into the `keys` list given to spendingPaths. */
  readonly signers: SignerThreshold;
  /** older(n): the nSequence the input needs. */
  readonly sequence?: number;
  /** after(n): the nLockTime the transaction needs. */
  readonly lockTime?: number;
  /** Besides signatures and locks, e.g. 'sha256 preimage'. */
  readonly needs: readonly string[];
  /** Length of each satisfaction item, bottom first (without the script or control block). */
  readonly witness: readonly number[];
}

/** Beyond this many paths a tree is refused: no wallet policy comes near it. */
export const MAX_PATHS = 1000;

/** thresh() parts beyond plain signers are chosen explicitly: 2^n combinations. */
const MAX_CHOICE_SUBS = 10;
const NONE: SignerThreshold = { k: 0, of: [] };
type Option = Omit<MiniscriptPath, 'witness'> & { readonly witness: number[] };
interface Result { readonly sats: Option[]; readonly dsat: number[] | null }

const partsOf = (t: SignerThreshold) => (t.k === 0 ? [] : t.k === t.of.length ? t.of : [t]);
/** Both thresholds: their "all of" parts flattened into one. */
function allOf(a: SignerThreshold, b: SignerThreshold): SignerThreshold {
  const of = [...partsOf(a), ...partsOf(b)];
  if (of.length === 1 && typeof of[0] !== 'number') return of[0]!;
  return { k: of.length, of };
}

function mergeLock(a: number | undefined, b: number | undefined, typeOf: (n: number) => boolean): number | undefined | false {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (typeOf(a) !== typeOf(b)) return false; // a height and a time: no transaction meets both
  return Math.max(a, b);
}

/** Both options at once, `top`'s items above `bottom`'s; undefined when their locks conflict. */
function combine(bottom: Option, top: Option): Option | undefined {
  const sequence = mergeLock(bottom.sequence, top.sequence, (n) => (n & SEQUENCE_TYPE_FLAG) !== 0);
  const lockTime = mergeLock(bottom.lockTime, top.lockTime, (n) => n >= LOCKTIME_THRESHOLD);
  if (sequence === false || lockTime === false) return undefined;
  return {
    signers: allOf(bottom.signers, top.signers),
    ...(sequence !== undefined && { sequence }),
    ...(lockTime !== undefined && { lockTime }),
    needs: [...bottom.needs, ...top.needs],
    witness: [...bottom.witness, ...top.witness],
  };
}

const itemsOnly = (witness: number[]): Option => ({ signers: NONE, needs: [], witness });
const withItems = (o: Option, below: number[], above: number[]): Option => ({ ...o, witness: [...below, ...o.witness, ...above] });

function product(bottoms: Option[], tops: Option[]): Option[] {
  const out: Option[] = [];
  for (const b of bottoms) for (const t of tops) {
    const c = combine(b, t);
    if (c) out.push(c);
    if (out.length > MAX_PATHS) throw new MiniscriptError('too_many_paths', `The script has more than ${MAX_PATHS} spending paths`);
  }
  return out;
}

export interface PathSizes {
  /** Signature item length: ECDSA 72 (with the sighash byte), Schnorr 64 (65 with a sighash byte). */
  readonly signature: number;
}

export function spendingPaths(root: MiniscriptNode, ctx: ScriptContext, keys: readonly string[], sizes: PathSizes): MiniscriptPath[] {
  const sig = sizes.signature;
  const pub = ctx === 'tapscript' ? 32 : 33;
  const index = (key: string) => {
    const i = keys.indexOf(key);
    if (i < 0) throw new MiniscriptError('invalid_key', 'A key of the script is missing from the key list');
    return i;
  };
  const keyOption = (key: string, witness: number[]): Option => ({ signers: { k: 1, of: [index(key)] }, needs: [], witness });

  const visit = (n: MiniscriptNode): Result => {
    const s = n.subs.map(visit);
    const [x, y, z] = s;
    switch (n.fragment) {
      case '0': return { sats: [], dsat: [] };
      case '1': return { sats: [itemsOnly([])], dsat: null };
      case 'pk_k': return { sats: [keyOption(n.keys[0]!, [sig])], dsat: [0] };
      case 'pk_h': return { sats: [keyOption(n.keys[0]!, [sig, pub])], dsat: [0, pub] };
      case 'older': return { sats: [{ signers: NONE, sequence: n.k, needs: [], witness: [] }], dsat: null };
      case 'after': return { sats: [{ signers: NONE, lockTime: n.k, needs: [], witness: [] }], dsat: null };
      case 'sha256': case 'hash256': case 'ripemd160': case 'hash160':
        return { sats: [{ signers: NONE, needs: [`${n.fragment} preimage`], witness: [32] }], dsat: null };
      case 'a': case 's': case 'c': case 'n': return x!;
      case 'd': return { sats: x!.sats.map((o) => withItems(o, [], [1])), dsat: [0] };
      case 'v': return { sats: x!.sats, dsat: null };
      case 'j': return { sats: x!.sats, dsat: [0] };
      case 'and_v': return { sats: product(y!.sats, x!.sats), dsat: null };
      case 'and_b': return { sats: product(y!.sats, x!.sats), dsat: y!.dsat && x!.dsat && [...y!.dsat, ...x!.dsat] };
      case 'or_b': case 'or_c': case 'or_d': {
        const left = n.fragment === 'or_b' ? (y!.dsat ? x!.sats.map((o) => withItems(o, y!.dsat!, [])) : []) : x!.sats;
        const right = x!.dsat ? y!.sats.map((o) => withItems(o, [], x!.dsat!)) : [];
        const dsat = n.fragment === 'or_c' || !x!.dsat || !y!.dsat ? null : [...y!.dsat, ...x!.dsat];
        return { sats: [...left, ...right], dsat };
      }
      case 'or_i': {
        const dsats = [x!.dsat && [...x!.dsat, 1], y!.dsat && [...y!.dsat, 0]].filter((d): d is number[] => d !== null);
        const dsat = dsats.sort((a, b) => sum(b) - sum(a))[0] ?? null;
        return { sats: [...x!.sats.map((o) => withItems(o, [], [1])), ...y!.sats.map((o) => withItems(o, [], [0]))], dsat };
      }
      case 'andor': {
        const viaZ = x!.dsat ? z!.sats.map((o) => withItems(o, [], x!.dsat!)) : [];
        return { sats: [...product(y!.sats, x!.sats), ...viaZ], dsat: x!.dsat && z!.dsat && [...z!.dsat, ...x!.dsat] };
      }
      case 'multi':
        return { sats: [{ signers: { k: n.k, of: n.keys.map(index) }, needs: [], witness: [0, ...Array<number>(n.k).fill(sig)] }], dsat: Array<number>(n.k + 1).fill(0) };
      case 'multi_a':
        return {
          sats: [{ signers: { k: n.k, of: n.keys.map(index) }, needs: [], witness: [...Array<number>(n.k).fill(sig), ...Array<number>(n.keys.length - n.k).fill(0)] }],
          dsat: Array<number>(n.keys.length).fill(0),
        };
      case 'thresh': return threshPaths(n.k, s);
    }
  };
  const sats = visit(root).sats;
  return dedupe(sats).map((o) => ({ ...o, witness: o.witness }));
}

const sum = (items: readonly number[]) => items.reduce((a, b) => a + b, 0);

/**
 * thresh(k, ...): subs that are one signer threshold with no lock ("simple", such as `s:pk(A)`)
 * join into one k'-of group; the others are chosen explicitly. Items: the first sub on top.
 */
function threshPaths(k: number, subs: readonly Result[]): Result {
  const simple = subs.map((r) => r.sats.length === 1 && r.dsat !== null && isPlain(r.sats[0]!) && r.dsat.length === r.sats[0]!.witness.length);
  const complex = subs.map((_, i) => i).filter((i) => !simple[i]);
  const simpleIdx = subs.map((_, i) => i).filter((i) => simple[i]);
  if (complex.length > MAX_CHOICE_SUBS) {
    throw new MiniscriptError('too_many_paths', `A thresh() with more than ${MAX_CHOICE_SUBS} parts that are not single signers has too many spending paths to list`);
  }
  const sats: Option[] = [];
  for (let mask = 0; mask < 1 << complex.length; mask++) {
    const chosen = complex.filter((_, b) => mask & (1 << b));
    const fromSimple = k - chosen.length;
    if (fromSimple < 0 || fromSimple > simpleIdx.length) continue;
    if (complex.some((i) => !chosen.includes(i) && subs[i]!.dsat === null)) continue;
    // The simple subs that sign: the ones whose satisfaction outweighs their dissatisfaction most.
    const gain = (i: number) => sum(subs[i]!.sats[0]!.witness) - sum(subs[i]!.dsat!);
    const signing = new Set([...simpleIdx].sort((a, b) => gain(b) - gain(a)).slice(0, fromSimple));
    const group: Option = {
      signers: fromSimple === 0 ? NONE : { k: fromSimple, of: simpleIdx.map((i) => singleOrGroup(subs[i]!.sats[0]!.signers)) },
      needs: [],
      witness: [],
    };
    let options: Option[] = [group];
    for (let i = subs.length - 1; i >= 0; i--) {
      const r = subs[i]!;
      let here: Option[];
      if (simple[i]) here = [itemsOnly(signing.has(i) ? r.sats[0]!.witness : r.dsat!)];
      else if (chosen.includes(i)) here = r.sats;
      else here = [itemsOnly(r.dsat!)];
      options = product(options, here);
    }
    sats.push(...options);
  }
  const dsat = subs.every((r) => r.dsat !== null) ? subs.toReversed().flatMap((r) => r.dsat!) : null;
  return { sats, dsat };
}

const singleOrGroup = (t: SignerThreshold) => (t.k === 1 && t.of.length === 1 ? t.of[0]! : t);
const isPlain = (o: Option) => o.sequence === undefined && o.lockTime === undefined && o.needs.length === 0 && o.signers.k > 0;

/** One option per distinct requirement, with its largest witness. */
function dedupe(options: Option[]): Option[] {
  const byKey = new Map<string, Option>();
  for (const o of options) {
    const key = JSON.stringify([o.signers, o.sequence, o.lockTime, o.needs]);
    const seen = byKey.get(key);
    if (!seen || sum(o.witness) > sum(seen.witness)) byKey.set(key, o);
  }
  return [...byKey.values()];
}
