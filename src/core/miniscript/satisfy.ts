/**
 * The non-malleable satisfier of Bitcoin Core (`script/miniscript.h`, ProduceInput): for every node
 * the best satisfaction and dissatisfaction from what is available, preferring, as Core does,
 * options that need a signature over those that do not (a third party cannot forge those), then
 * non-malleable ones, then the smaller. The witness equals what Core's `finalizepsbt` builds.
 */
import { MiniscriptError } from './errors.js';
import { LOCKTIME_THRESHOLD, SEQUENCE_TYPE_FLAG, type MiniscriptNode } from './node.js';
import type { KeyBytes } from './script.js';

export interface SatisfierInputs {
  /** Script bytes of a key (33-byte compressed in wsh, 32-byte x-only in tapscript). */
  readonly keyBytes: KeyBytes;
  /** The signature of a key (with its sighash byte), if present. */
  readonly signatureOf: (key: string) => Uint8Array | undefined;
  /** Whether the input's nSequence meets older(n). */
  readonly checkOlder: (n: number) => boolean;
  /** Whether the transaction's nLockTime meets after(n). */
  readonly checkAfter: (n: number) => boolean;
}

interface Stack {
  readonly ok: boolean;
  readonly hasSig: boolean;
  readonly malleable: boolean;
  readonly nonCanon: boolean;
  readonly size: number;
  readonly items: readonly Uint8Array[];
}

const INVALID: Stack = { ok: false, hasSig: false, malleable: false, nonCanon: false, size: 0, items: [] };
const EMPTY: Stack = { ok: true, hasSig: false, malleable: false, nonCanon: false, size: 0, items: [] };
const item = (bytes: Uint8Array): Stack => ({ ...EMPTY, size: bytes.length + 1, items: [bytes] });
const ZERO = item(new Uint8Array(0));
const ONE = item(Uint8Array.of(1));
const sigItem = (sig: Uint8Array | undefined): Stack => (sig ? { ...item(sig), hasSig: true } : { ...INVALID, hasSig: true });
const set = (s: Stack, flags: Partial<Pick<Stack, 'malleable' | 'nonCanon'>>): Stack => ({ ...s, ...flags });

/** a below b (Core's a + b). */
function cat(a: Stack, b: Stack): Stack {
  if (!a.ok || !b.ok) return { ...INVALID, hasSig: a.hasSig || b.hasSig };
  return {
    ok: true,
    hasSig: a.hasSig || b.hasSig,
    malleable: a.malleable || b.malleable,
    nonCanon: a.nonCanon || b.nonCanon,
    size: a.size + b.size,
    items: [...a.items, ...b.items],
  };
}
const cats = (...s: Stack[]) => s.reduce(cat, EMPTY);

/** Core's choice between two options (operator|). */
function choose(a: Stack, b: Stack): Stack {
  if (!a.ok) return b;
  if (!b.ok) return a;
  if (!a.hasSig && b.hasSig) return a;
  if (!b.hasSig && a.hasSig) return b;
  if (!a.hasSig && !b.hasSig) {
    // Two options without a signature: whichever is used, a third party can swap in the other.
    a = set(a, { malleable: true });
    b = set(b, { malleable: true });
  } else {
    if (b.malleable && !a.malleable) return a;
    if (a.malleable && !b.malleable) return b;
  }
  return a.size <= b.size ? a : b;
}
const any = (...s: Stack[]) => s.reduce(choose);

interface Pair { readonly nsat: Stack; readonly sat: Stack }

function produce(n: MiniscriptNode, inputs: SatisfierInputs): Pair {
  const subs = n.subs.map((s) => produce(s, inputs));
  const [x, y, z] = subs;
  switch (n.fragment) {
    case '0': return { nsat: EMPTY, sat: INVALID };
    case '1': return { nsat: INVALID, sat: EMPTY };
    case 'pk_k': return { nsat: ZERO, sat: sigItem(inputs.signatureOf(n.keys[0]!)) };
    case 'pk_h': {
      const key = item(inputs.keyBytes(n.keys[0]!));
      return { nsat: cat(ZERO, key), sat: cat(sigItem(inputs.signatureOf(n.keys[0]!)), key) };
    }
    case 'older': return { nsat: INVALID, sat: inputs.checkOlder(n.k) ? EMPTY : INVALID };
    case 'after': return { nsat: INVALID, sat: inputs.checkAfter(n.k) ? EMPTY : INVALID };
    // The service holds no preimages: a hash branch is never satisfied, and its dissatisfaction
    // (32 zero bytes) is what Core uses too.
    case 'sha256': case 'hash256': case 'ripemd160': case 'hash160': return { nsat: item(new Uint8Array(32)), sat: INVALID };
    case 'a': case 's': case 'c': case 'n': return x!;
    case 'd': return { nsat: ZERO, sat: cat(x!.sat, ONE) };
    case 'v': return { nsat: INVALID, sat: x!.sat };
    case 'j': return { nsat: set(ZERO, { malleable: x!.nsat.ok && !x!.nsat.hasSig }), sat: x!.sat };
    case 'and_v': return { nsat: set(cat(y!.nsat, x!.sat), { nonCanon: true }), sat: cat(y!.sat, x!.sat) };
    case 'and_b':
      return {
        nsat: any(cat(y!.nsat, x!.nsat), set(cat(y!.sat, x!.nsat), { malleable: true, nonCanon: true }), set(cat(y!.nsat, x!.sat), { malleable: true, nonCanon: true })),
        sat: cat(y!.sat, x!.sat),
      };
    case 'or_b':
      return { nsat: cat(y!.nsat, x!.nsat), sat: any(cat(y!.nsat, x!.sat), cat(y!.sat, x!.nsat), set(cat(y!.sat, x!.sat), { malleable: true, nonCanon: true })) };
    case 'or_c': return { nsat: INVALID, sat: choose(x!.sat, cat(y!.sat, x!.nsat)) };
    case 'or_d': return { nsat: cat(y!.nsat, x!.nsat), sat: choose(x!.sat, cat(y!.sat, x!.nsat)) };
    case 'or_i': return { nsat: choose(cat(x!.nsat, ONE), cat(y!.nsat, ZERO)), sat: choose(cat(x!.sat, ONE), cat(y!.sat, ZERO)) };
    case 'andor':
      return { nsat: choose(set(cat(y!.nsat, x!.sat), { nonCanon: true }), cat(z!.nsat, x!.nsat)), sat: choose(cat(y!.sat, x!.sat), cat(z!.sat, x!.nsat)) };
    case 'multi': {
      // sats[j]: the best stack with j signatures among the keys so far (a dummy element first).
      let sats: Stack[] = [ZERO];
      for (const key of n.keys) {
        const s = sigItem(inputs.signatureOf(key));
        const next = [sats[0]!];
        for (let j = 1; j < sats.length; j++) next.push(choose(sats[j]!, cat(sats[j - 1]!, s)));
        next.push(cat(sats[sats.length - 1]!, s));
        sats = next;
      }
      return { nsat: cats(...Array<Stack>(n.k + 1).fill(ZERO)), sat: sats[n.k]! };
    }
    case 'multi_a': {
      // The first key's signature goes on top: build from the last key.
      let sats: Stack[] = [EMPTY];
      for (const key of n.keys.toReversed()) {
        const s = sigItem(inputs.signatureOf(key));
        const next = [cat(sats[0]!, ZERO)];
        for (let j = 1; j < sats.length; j++) next.push(choose(cat(sats[j]!, ZERO), cat(sats[j - 1]!, s)));
        next.push(cat(sats[sats.length - 1]!, s));
        sats = next;
      }
      return { nsat: sats[0]!, sat: sats[n.k]! };
    }
    case 'thresh': {
      let sats: Stack[] = [EMPTY];
      for (const res of subs.toReversed()) {
        const next = [cat(sats[0]!, res.nsat)];
        for (let j = 1; j < sats.length; j++) next.push(choose(cat(sats[j]!, res.nsat), cat(sats[j - 1]!, res.sat)));
        next.push(cat(sats[sats.length - 1]!, res.sat));
        sats = next;
      }
      let nsat = INVALID;
      sats.forEach((s, i) => {
        if (i !== 0 && i !== n.k) s = set(s, { malleable: true, nonCanon: true });
        if (i !== n.k) nsat = choose(nsat, s);
      });
      return { nsat, sat: sats[n.k]! };
    }
  }
}

/**
 * The witness items (bottom first, without the script) of the non-malleable satisfaction, or
 * a MiniscriptError saying why there is none.
 */
export function satisfy(root: MiniscriptNode, inputs: SatisfierInputs): Uint8Array[] {
  const { sat } = produce(root, inputs);
  if (!sat.ok) throw new MiniscriptError('not_satisfiable', 'The signatures and timelocks present satisfy no spending path');
  if (sat.malleable || !sat.hasSig) throw new MiniscriptError('malleable', 'The only satisfaction available could be changed by a third party');
  return [...sat.items];
}

/** BIP68/BIP112: does an input with nSequence `sequence` meet older(n)? (transaction version 2 or more) */
export function sequenceMeets(sequence: number, n: number): boolean {
  if (sequence & 0x80000000) return false;
  if ((sequence & SEQUENCE_TYPE_FLAG) !== (n & SEQUENCE_TYPE_FLAG)) return false;
  return (sequence & 0xffff) >= (n & 0xffff);
}

/** BIP65: does nLockTime `lockTime` (with a non-final input) meet after(n)? */
export function lockTimeMeets(lockTime: number, n: number): boolean {
  if (lockTime < LOCKTIME_THRESHOLD !== n < LOCKTIME_THRESHOLD) return false;
  return lockTime >= n;
}
