/**
 * The miniscript type system (as Bitcoin Core's `script/miniscript.cpp` ComputeType): basic types
 * B/V/K/W, properties z o n d u, malleability e f s m, `x` (an expensive VERIFY) and the timelock
 * kinds g h i j with `k` (no mix of heights and times in one spend).
 */
import type { MiniscriptNode, ScriptContext } from './node.js';
import { LOCKTIME_THRESHOLD, SEQUENCE_TYPE_FLAG } from './node.js';

export type TypeBits = number;
const LETTERS = 'BVKWzondufesmxghijk';
const bit = (c: string) => 1 << LETTERS.indexOf(c);

const known = new Map<string, TypeBits>();
/** The bits of a property string such as "Bdu" (the few strings used are computed once). */
export function T(props: string): TypeBits {
  let bits = known.get(props);
  if (bits === undefined) {
    bits = 0;
    for (const c of props) bits |= bit(c);
    known.set(props, bits);
  }
  return bits;
}

/** True when `t` has every property of `props`. */
export const has = (t: TypeBits, props: string): boolean => (t & T(props)) === T(props);
const when = (cond: boolean, props: string): TypeBits => (cond ? T(props) : 0);

/** Property letters of a type, in the usual order (e.g. "Bzudemsxk"). */
export const typeString = (t: TypeBits): string => [...LETTERS].filter((c) => t & bit(c)).join('');

const GHIJ = T('ghij');
function noMix(x: TypeBits, y: TypeBits): boolean {
  return !((has(x, 'g') && has(y, 'h')) || (has(x, 'h') && has(y, 'g')) || (has(x, 'i') && has(y, 'j')) || (has(x, 'j') && has(y, 'i')));
}
const kAnd = (x: TypeBits, y: TypeBits): TypeBits => when(has(x & y, 'k') && noMix(x, y), 'k');

/** Type of a node whose subs have the given types; 0 when the combination is invalid. */
export function computeType(n: MiniscriptNode, subTypes: readonly TypeBits[], ctx: ScriptContext): TypeBits {
  const [x = 0, y = 0, z = 0] = subTypes;
  const e = (props: string) => T(props);
  switch (n.fragment) {
    case 'pk_k': return e('Konudemsxk');
    case 'pk_h': return e('Knudemsxk');
    case 'older': return when((n.k & SEQUENCE_TYPE_FLAG) !== 0, 'g') | when((n.k & SEQUENCE_TYPE_FLAG) === 0, 'h') | e('Bzfmxk');
    case 'after': return when(n.k >= LOCKTIME_THRESHOLD, 'i') | when(n.k < LOCKTIME_THRESHOLD, 'j') | e('Bzfmxk');
    case 'sha256': case 'ripemd160': case 'hash256': case 'hash160': return e('Bonudmk');
    case '1': return e('Bzufmxk');
    case '0': return e('Bzudemsxk');
    case 'a': return when(has(x, 'B'), 'W') | (x & T('ghijk')) | (x & T('udfems')) | e('x');
    case 's': return when(has(x, 'Bo'), 'W') | (x & T('ghijk')) | (x & T('udfemsx'));
    case 'c': return when(has(x, 'K'), 'B') | (x & T('ghijk')) | (x & T('ondfem')) | e('us');
    case 'd': return when(has(x, 'Vz'), 'B') | when(has(x, 'z'), 'o') | when(has(x, 'f'), 'e') | (x & T('ghijk')) | (x & T('ms')) | when(ctx === 'tapscript', 'u') | e('ndx');
    case 'v': return when(has(x, 'B'), 'V') | (x & T('ghijk')) | (x & T('zonms')) | e('fx');
    case 'j': return when(has(x, 'Bn'), 'B') | when(has(x, 'f'), 'e') | (x & T('ghijk')) | (x & T('oums')) | e('ndx');
    case 'n': return (x & T('ghijk')) | (x & T('Bzondfems')) | e('ux');
    case 'and_v':
      return (has(x, 'V') ? y & T('KVB') : 0) | (x & T('n')) | (has(x, 'z') ? y & T('n') : 0) |
        (has(x | y, 'z') ? (x | y) & T('o') : 0) | (x & y & T('dmz')) | ((x | y) & T('s')) |
        when(has(y, 'f') || has(x, 's'), 'f') | (y & T('ux')) | ((x | y) & GHIJ) | kAnd(x, y);
    case 'and_b':
      return (has(y, 'W') ? x & T('B') : 0) | (has(x | y, 'z') ? (x | y) & T('o') : 0) | (x & T('n')) | (has(x, 'z') ? y & T('n') : 0) |
        (has(x & y, 's') ? x & y & T('e') : 0) | (x & y & T('dzm')) |
        when(has(x & y, 'f') || has(x, 'sf') || has(y, 'sf'), 'f') | ((x | y) & T('s')) | e('ux') | ((x | y) & GHIJ) | kAnd(x, y);
    case 'or_b':
      return when(has(x, 'Bd') && has(y, 'Wd'), 'B') | (has(x | y, 'z') ? (x | y) & T('o') : 0) |
        (has(x | y, 's') && has(x & y, 'e') ? x & y & T('m') : 0) |
        (x & y & T('zse')) | e('dux') | ((x | y) & GHIJ) | (x & y & T('k'));
    case 'or_d':
      return (has(x, 'Bdu') ? y & T('B') : 0) | (has(y, 'z') ? x & T('o') : 0) | (has(x, 'e') && has(x | y, 's') ? x & y & T('m') : 0) |
        (x & y & T('zs')) | (y & T('ufde')) | e('x') | ((x | y) & GHIJ) | (x & y & T('k'));
    case 'or_c':
      return (has(x, 'Bdu') ? y & T('V') : 0) | (has(y, 'z') ? x & T('o') : 0) | (has(x, 'e') && has(x | y, 's') ? x & y & T('m') : 0) |
        (x & y & T('zs')) | e('fx') | ((x | y) & GHIJ) | (x & y & T('k'));
    case 'or_i':
      return (x & y & T('VBKufs')) | when(has(x & y, 'z'), 'o') | (has(x | y, 'f') ? (x | y) & T('e') : 0) |
        (has(x | y, 's') ? x & y & T('m') : 0) | ((x | y) & T('d')) | e('x') | ((x | y) & GHIJ) | (x & y & T('k'));
    case 'andor': {
      const xyz = x | (y & z);
      return (has(x, 'Bdu') ? y & z & T('BKV') : 0) | (x & y & z & T('z')) | (has(xyz, 'z') ? xyz & T('o') : 0) | (y & z & T('u')) |
        (has(x, 's') || has(y, 'f') ? z & T('f') : 0) | (z & T('d')) | (has(x, 's') || has(y, 'f') ? z & T('e') : 0) |
        (has(x, 'e') && has(x | y | z, 's') ? x & y & z & T('m') : 0) | (z & (x | y) & T('s')) | e('x') | ((x | y | z) & GHIJ) |
        when(has(x & y & z, 'k') && noMix(x, y), 'k');
    }
    case 'multi': return e('Bnudemsk');
    case 'multi_a': return e('Budemsk');
    case 'thresh': return threshType(n.k, subTypes);
  }
}

function threshType(k: number, subTypes: readonly TypeBits[]): TypeBits {
  let allE = true;
  let allM = true;
  let args = 0;
  let numS = 0;
  let acc = T('k');
  for (const [i, t] of subTypes.entries()) {
    if (!has(t, i === 0 ? 'Bdu' : 'Wdu')) return 0;
    if (!has(t, 'e')) allE = false;
    if (!has(t, 'm')) allM = false;
    if (has(t, 's')) numS++;
    args += has(t, 'z') ? 0 : has(t, 'o') ? 1 : 2;
    acc = ((acc | t) & GHIJ) | when(has(acc & t, 'k') && (k <= 1 || noMix(acc, t)), 'k');
  }
  const n = subTypes.length;
  return T('Bdu') | when(args === 0, 'z') | when(args === 1, 'o') | when(allE && numS === n, 'e') |
    when(allE && allM && numS >= n - k, 'm') | when(numS >= n - k + 1, 's') | acc;
}

/** Exactly one basic type, or the node is invalid (Core's SanitizeType). */
export function sanitize(t: TypeBits): TypeBits {
  const basic = [has(t, 'B'), has(t, 'V'), has(t, 'K'), has(t, 'W')].filter(Boolean).length;
  return basic === 1 ? t : 0;
}

/** Types of every node, computed bottom-up; the map holds each node's sanitized type. */
export function typeTree(root: MiniscriptNode, ctx: ScriptContext): Map<MiniscriptNode, TypeBits> {
  const types = new Map<MiniscriptNode, TypeBits>();
  const visit = (n: MiniscriptNode): TypeBits => {
    const subs = n.subs.map(visit);
    const t = subs.some((s) => s === 0) ? 0 : sanitize(computeType(n, subs, ctx));
    types.set(n, t);
    return t;
  };
  visit(root);
  return types;
}
