/** The miniscript tree: one node per fragment, wrappers and aliases expanded (`t:X` is `and_v(X,1)`). */

/** Where the script runs: P2WSH (and P2SH-P2WSH) witness scripts, or a BIP342 tapscript leaf. */
export type ScriptContext = 'wsh' | 'tapscript';

export type Fragment =
  | '0' | '1'
  | 'pk_k' | 'pk_h'
  | 'older' | 'after'
  | 'sha256' | 'hash256' | 'ripemd160' | 'hash160'
  | 'a' | 's' | 'c' | 'd' | 'v' | 'j' | 'n'
  | 'and_v' | 'and_b' | 'or_b' | 'or_c' | 'or_d' | 'or_i' | 'andor'
  | 'thresh' | 'multi' | 'multi_a';

export const HASH_FRAGMENTS = ['sha256', 'hash256', 'ripemd160', 'hash160'] as const;
export type HashFragment = (typeof HASH_FRAGMENTS)[number];
export const hashLength = (f: HashFragment): number => (f === 'sha256' || f === 'hash256' ? 32 : 20);

export interface MiniscriptNode {
  readonly fragment: Fragment;
  readonly subs: readonly MiniscriptNode[];
  /** Keys as written (hex or a descriptor key expression); pk_k/pk_h: one, multi/multi_a: all. */
  readonly keys: readonly string[];
  /** older/after: the lock value; thresh/multi/multi_a: the threshold k. */
  readonly k: number;
  /** Hash fragments: the digest. */
  readonly hash?: Uint8Array;
}

export const node = (fragment: Fragment, subs: MiniscriptNode[] = [], extra: Partial<MiniscriptNode> = {}): MiniscriptNode => ({
  fragment,
  subs,
  keys: [],
  k: 0,
  ...extra,
});

/** Every key of the tree in text order (repeats kept). */
export function keysInOrder(root: MiniscriptNode): string[] {
  const out: string[] = [];
  const walk = (n: MiniscriptNode) => {
    out.push(...n.keys);
    n.subs.forEach(walk);
  };
  walk(root);
  return out;
}

/** BIP68: older(n) with this bit counts time (512 s units), without it blocks. */
export const SEQUENCE_TYPE_FLAG = 1 << 22;
/** nLockTime below this is a height, at or above a Unix time. */
export const LOCKTIME_THRESHOLD = 500_000_000;
