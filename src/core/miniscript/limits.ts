/**
 * Resource figures of a tree, as Bitcoin Core computes them (`script/miniscript.h`): the opcodes a
 * satisfaction executes, the witness items it can need, the largest satisfaction in bytes.
 * `null` stands for "no such (dis)satisfaction".
 */
import type { MiniscriptNode, ScriptContext } from './node.js';
import { has, T, type TypeBits } from './types.js';

type Opt = number | null;
const add = (...v: Opt[]): Opt => (v.some((x) => x === null) ? null : v.reduce<number>((s, x) => s + x!, 0));
const max = (a: Opt, b: Opt): Opt => (a === null ? b : b === null ? a : Math.max(a, b));
interface SatDsat { readonly sat: Opt; readonly dsat: Opt }

/** Fold over thresh subs: best[j] = the most j satisfied subs can cost. */
function threshFold(subs: readonly SatDsat[], k: number): SatDsat {
  let sats: Opt[] = [0];
  for (const s of subs) {
    const next: Opt[] = [add(sats[0]!, s.dsat)];
    for (let j = 1; j < sats.length; j++) next.push(max(add(sats[j]!, s.dsat), add(sats[j - 1]!, s.sat)));
    next.push(add(sats[sats.length - 1]!, s.sat));
    sats = next;
  }
  return { sat: sats[k] ?? null, dsat: sats[0]! };
}

/** Opcodes executed (non-push): the static count plus the most a satisfaction adds. */
export function opsCount(root: MiniscriptNode, types: Map<MiniscriptNode, TypeBits>): number | null {
  const ops = (n: MiniscriptNode): SatDsat & { count: number } => {
    const s = n.subs.map(ops);
    const [x, y, z] = s;
    const count = s.reduce((sum, c) => sum + c.count, 0);
    switch (n.fragment) {
      case 'pk_k': return { count: 0, sat: 0, dsat: 0 };
      case 'pk_h': return { count: 3, sat: 0, dsat: 0 };
      case 'older': case 'after': return { count: 1, sat: 0, dsat: null };
      case 'sha256': case 'hash256': case 'ripemd160': case 'hash160': return { count: 4, sat: 0, dsat: null };
      case '1': return { count: 0, sat: 0, dsat: null };
      case '0': return { count: 0, sat: null, dsat: 0 };
      case 'multi': return { count: 1, sat: n.keys.length, dsat: n.keys.length };
      case 'multi_a': return { count: n.keys.length + 1, sat: 0, dsat: 0 };
      case 's': case 'c': case 'n': return { count: count + 1, sat: x!.sat, dsat: x!.dsat };
      case 'a': return { count: count + 2, sat: x!.sat, dsat: x!.dsat };
      case 'd': return { count: count + 3, sat: x!.sat, dsat: 0 };
      case 'j': return { count: count + 4, sat: x!.sat, dsat: 0 };
      case 'v': return { count: count + (has(types.get(n.subs[0]!)!, 'x') ? 1 : 0), sat: x!.sat, dsat: null };
      case 'and_v': return { count, sat: add(x!.sat, y!.sat), dsat: null };
      case 'and_b': return { count: count + 1, sat: add(x!.sat, y!.sat), dsat: add(x!.dsat, y!.dsat) };
      case 'or_b': return { count: count + 1, sat: max(add(x!.sat, y!.dsat), add(x!.dsat, y!.sat)), dsat: add(x!.dsat, y!.dsat) };
      case 'or_d': return { count: count + 3, sat: max(x!.sat, add(x!.dsat, y!.sat)), dsat: add(x!.dsat, y!.dsat) };
      case 'or_c': return { count: count + 2, sat: max(x!.sat, add(x!.dsat, y!.sat)), dsat: null };
      case 'or_i': return { count: count + 3, sat: max(x!.sat, y!.sat), dsat: max(x!.dsat, y!.dsat) };
      case 'andor': return { count: count + 3, sat: max(add(y!.sat, x!.sat), add(x!.dsat, z!.sat)), dsat: add(x!.dsat, z!.dsat) };
      case 'thresh': return { count: count + s.length, ...threshFold(s, n.k) };
    }
  };
  const r = ops(root);
  return r.sat === null ? null : r.count + r.sat;
}

/**
 * Witness of a satisfaction: `items` counts stack elements, `bytes` their serialized size (each
 * item's length prefix included), with signatures of `sigBytes` (Core: 72 ECDSA, 65 Schnorr).
 */
export function satisfactionFigures(root: MiniscriptNode, ctx: ScriptContext, sigBytes = ctx === 'tapscript' ? 65 : 72): { items: number | null; bytes: number | null } {
  const sig = 1 + sigBytes;
  const pubkey = ctx === 'tapscript' ? 1 + 32 : 1 + 33;
  const fig = (n: MiniscriptNode): { items: SatDsat; bytes: SatDsat } => {
    const s = n.subs.map(fig);
    const [x, y, z] = s;
    const pair = (items: SatDsat, bytes: SatDsat) => ({ items, bytes });
    const both = (f: (p: SatDsat[]) => SatDsat) => pair(f(s.map((c) => c.items)), f(s.map((c) => c.bytes)));
    switch (n.fragment) {
      case '0': return pair({ sat: null, dsat: 0 }, { sat: null, dsat: 0 });
      case '1': case 'older': case 'after': return pair({ sat: 0, dsat: null }, { sat: 0, dsat: null });
      case 'pk_k': return pair({ sat: 1, dsat: 1 }, { sat: sig, dsat: 1 });
      case 'pk_h': return pair({ sat: 2, dsat: 2 }, { sat: sig + pubkey, dsat: 1 + pubkey });
      case 'multi': return pair({ sat: n.k + 1, dsat: n.k + 1 }, { sat: n.k * sig + 1, dsat: n.k + 1 });
      case 'multi_a': return pair({ sat: n.keys.length, dsat: n.keys.length }, { sat: n.k * sig + (n.keys.length - n.k), dsat: n.keys.length });
      // A hash dissatisfaction (any 32 bytes but the preimage) is malleable: Core leaves it out of the figures.
      case 'sha256': case 'hash256': case 'ripemd160': case 'hash160': return pair({ sat: 1, dsat: null }, { sat: 33, dsat: null });
      case 'a': case 's': case 'c': case 'n': return x!;
      case 'd': return pair({ sat: add(x!.items.sat, 1), dsat: 1 }, { sat: add(x!.bytes.sat, 2), dsat: 1 });
      case 'v': return pair({ sat: x!.items.sat, dsat: null }, { sat: x!.bytes.sat, dsat: null });
      case 'j': return pair({ sat: x!.items.sat, dsat: 1 }, { sat: x!.bytes.sat, dsat: 1 });
      case 'and_v': return both(([a, b]) => ({ sat: add(a!.sat, b!.sat), dsat: null }));
      case 'and_b': return both(([a, b]) => ({ sat: add(a!.sat, b!.sat), dsat: add(a!.dsat, b!.dsat) }));
      case 'or_b': return both(([a, b]) => ({ sat: max(add(a!.dsat, b!.sat), add(a!.sat, b!.dsat)), dsat: add(a!.dsat, b!.dsat) }));
      case 'or_c': return both(([a, b]) => ({ sat: max(a!.sat, add(a!.dsat, b!.sat)), dsat: null }));
      case 'or_d': return both(([a, b]) => ({ sat: max(a!.sat, add(a!.dsat, b!.sat)), dsat: add(a!.dsat, b!.dsat) }));
      case 'or_i':
        return pair(
          { sat: max(add(x!.items.sat, 1), add(y!.items.sat, 1)), dsat: max(add(x!.items.dsat, 1), add(y!.items.dsat, 1)) },
          { sat: max(add(x!.bytes.sat, 2), add(y!.bytes.sat, 1)), dsat: max(add(x!.bytes.dsat, 2), add(y!.bytes.dsat, 1)) },
        );
      case 'andor':
        return both(([a, b, c]) => ({ sat: max(add(a!.sat, b!.sat), add(a!.dsat, c!.sat)), dsat: add(a!.dsat, c!.dsat) }));
      case 'thresh': return both((subs) => threshFold(subs, n.k));
    }
    void z;
  };
  const r = fig(root);
  return { items: r.items.sat, bytes: r.bytes.sat };
}

/** Core's SatInfo: how far the stack can be above its final size, net and at any point during execution. */
interface Sat { readonly netdiff: number; readonly exec: number }
type SatOpt = Sat | null;
const S = (netdiff: number, exec: number): Sat => ({ netdiff, exec });
const seq = (...parts: SatOpt[]): SatOpt =>
  parts.reduce<SatOpt>((a, b) => (a === null || b === null ? null : S(a.netdiff + b.netdiff, Math.max(b.exec, b.netdiff + a.exec))), S(0, 0));
const either = (a: SatOpt, b: SatOpt): SatOpt => (a === null ? b : b === null ? a : S(Math.max(a.netdiff, b.netdiff), Math.max(a.exec, b.exec)));
const PUSH = S(-1, 0);
const NOP = S(0, 0);
const IF = S(1, 1);
const BINARY = S(1, 1);
const DUP = S(-1, 0);
const EQUALVERIFY = S(2, 2);
const EQUAL = S(1, 1);
const SIZE = S(-1, 0);
const CHECKSIG = S(1, 1);
const VERIFY = S(1, 1);

/**
 * Most stack elements a satisfaction can have while the script runs (Core's GetExecStackSize): what
 * tapscript's 1,000-element stack limit is checked against. null when unsatisfiable.
 */
export function execStackSize(root: MiniscriptNode, types: Map<MiniscriptNode, TypeBits>): number | null {
  const calc = (n: MiniscriptNode): { sat: SatOpt; dsat: SatOpt } => {
    const s = n.subs.map(calc);
    const [x, y, z] = s;
    switch (n.fragment) {
      case '0': return { sat: null, dsat: PUSH };
      case '1': return { sat: PUSH, dsat: null };
      case 'older': case 'after': return { sat: seq(PUSH, NOP), dsat: null };
      case 'pk_k': return { sat: PUSH, dsat: PUSH };
      case 'pk_h': { const v = seq(DUP, NOP, PUSH, EQUALVERIFY); return { sat: v, dsat: v }; }
      case 'sha256': case 'ripemd160': case 'hash256': case 'hash160': return { sat: seq(SIZE, PUSH, EQUALVERIFY, NOP, PUSH, EQUAL), dsat: null };
      case 'andor': return { sat: either(seq(x!.sat, IF, y!.sat), seq(x!.dsat, IF, z!.sat)), dsat: seq(x!.dsat, IF, z!.dsat) };
      case 'and_v': return { sat: seq(x!.sat, y!.sat), dsat: null };
      case 'and_b': return { sat: seq(x!.sat, y!.sat, BINARY), dsat: seq(x!.dsat, y!.dsat, BINARY) };
      case 'or_b': return { sat: seq(either(seq(x!.sat, y!.dsat), seq(x!.dsat, y!.sat)), BINARY), dsat: seq(x!.dsat, y!.dsat, BINARY) };
      case 'or_c': return { sat: either(seq(x!.sat, IF), seq(x!.dsat, IF, y!.sat)), dsat: null };
      case 'or_d': return { sat: either(seq(x!.sat, S(-1, 0), IF), seq(x!.dsat, NOP, IF, y!.sat)), dsat: seq(x!.dsat, NOP, IF, y!.dsat) };
      case 'or_i': return { sat: seq(IF, either(x!.sat, y!.sat)), dsat: seq(IF, either(x!.dsat, y!.dsat)) };
      case 'multi': { const v = S(n.k, n.k + n.keys.length + 2); return { sat: v, dsat: v }; }
      case 'multi_a': { const v = S(n.keys.length - 1, n.keys.length); return { sat: v, dsat: v }; }
      case 'a': case 'n': case 's': return x!;
      case 'c': return { sat: seq(x!.sat, CHECKSIG), dsat: seq(x!.dsat, CHECKSIG) };
      case 'd': return { sat: seq(DUP, IF, x!.sat), dsat: seq(DUP, IF) };
      case 'v': return { sat: seq(x!.sat, VERIFY), dsat: null };
      case 'j': return { sat: seq(SIZE, NOP, IF, x!.sat), dsat: seq(SIZE, NOP, IF) };
      case 'thresh': {
        let sats: SatOpt[] = [S(0, 0)];
        s.forEach((sub, i) => {
          const add = i ? BINARY : S(0, 0);
          const next: SatOpt[] = [seq(sats[0]!, sub.dsat, add)];
          for (let j = 1; j < sats.length; j++) next.push(seq(either(seq(sats[j]!, sub.dsat), seq(sats[j - 1]!, sub.sat)), add));
          next.push(seq(sats[sats.length - 1]!, sub.sat, add));
          sats = next;
        });
        return { sat: seq(sats[n.k] ?? null, PUSH, EQUAL), dsat: seq(sats[0]!, PUSH, EQUAL) };
      }
    }
  };
  const sat = calc(root).sat;
  const t = types.get(root)!;
  return sat === null ? null : sat.exec + (t & (T('B') | T('K') | T('W')) ? 1 : 0);
}
