/**
 * Batched public-key tweaking: P + t_k·G for many tweaks t_k at once, the one elliptic-curve
 * operation of non-hardened BIP32 derivation. Everything here is public data (public keys and
 * tweaks derived from them), so variable-time arithmetic is fine.
 *
 * Why not just noble's Point API: it works in projective coordinates with a constant-time
 * kernel and one field inversion per result. Here the base point G has a signed fixed-window
 * table of affine points (built once, lazily), and all accumulators of a batch advance one
 * window at a time with affine additions whose field inversions share one Montgomery batch
 * inversion. That costs about six field multiplications per window instead of fifteen.
 * Degenerate cases (an addition of a point to itself or its negation, probability ~2^-256)
 * fall back to noble's general code, so results are always exact.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';

const { Point } = secp256k1;
type NoblePoint = InstanceType<typeof Point>;

const P = Point.Fp.ORDER;
const MASK256 = (1n << 256n) - 1n;
const REDUCE = 0x1000003d1n; // 2^256 mod p

/** a·b mod p, using p = 2^256 - 2^32 - 977 (two folding steps instead of a division). */
function mul(a: bigint, b: bigint): bigint {
  let t = a * b;
  t = (t & MASK256) + (t >> 256n) * REDUCE;
  t = (t & MASK256) + (t >> 256n) * REDUCE;
  return t >= P ? t - P : t;
}
const inv = (a: bigint): bigint => Point.Fp.inv(a);

/** Window width of the table: 2^(W-1) affine multiples per window, ceil(257/W) windows. */
const W = 11;
const WINDOWS = Math.ceil(257 / W);
const HALF = 1 << (W - 1);
const FULL = 1 << W;
const WMASK = BigInt(FULL - 1);
const WBITS = BigInt(W);

interface Table {
  /** xs[w][j-1], ys[w][j-1] = affine j·2^(W·w)·G for j in 1..HALF. */
  xs: bigint[][];
  ys: bigint[][];
  /** p - y of the same points (negative digits). */
  negYs: bigint[][];
}
let table: Table | undefined;

/** Builds the table now (~0.2 s of CPU) rather than in the first derivation: the service calls it at start. */
export function prepareFixedBaseTable(): void {
  table ??= buildTable();
}

/**
 * Builds the table with the same batched affine additions as the main loop: row w starts at
 * B_w = 2^(W·w)·G and 2·B_w, and every further column adds B_w to all rows at once (j·B_w never
 * shares an x with B_w for 2 <= j < HALF, so no degenerate addition occurs).
 */
function buildTable(): Table {
  const bases: { x: bigint; y: bigint }[] = [];
  const doubles: { x: bigint; y: bigint }[] = [];
  let base: NoblePoint = Point.BASE;
  for (let w = 0; w < WINDOWS; w++) {
    bases.push(base.toAffine());
    doubles.push(base.double().toAffine());
    for (let i = 0; i < W; i++) base = base.double();
  }
  const xs = bases.map((b, w) => [b.x, doubles[w]!.x]);
  const ys = bases.map((b, w) => [b.y, doubles[w]!.y]);
  for (let j = 3; j <= HALF; j++) {
    const invs = batchInvert(bases.map((b, w) => b.x - xs[w]![j - 2]! + P));
    for (let w = 0; w < WINDOWS; w++) {
      const x1 = xs[w]![j - 2]!;
      const y1 = ys[w]![j - 2]!;
      const { x: x2, y: y2 } = bases[w]!;
      const lambda = mul(y2 - y1 + P, invs[w]!);
      let x3 = mul(lambda, lambda) - x1 - x2;
      if (x3 < 0n) x3 += P;
      if (x3 < 0n) x3 += P;
      const y3 = mul(lambda, x1 - x3 + P) - y1;
      xs[w]!.push(x3);
      ys[w]!.push(y3 < 0n ? y3 + P : y3);
    }
  }
  return { xs, ys, negYs: ys.map((row) => row.map((y) => P - y)) };
}

/** Inverses of non-zero field elements with one inversion (Montgomery's trick). */
function batchInvert(values: bigint[]): bigint[] {
  const n = values.length;
  const prefix = new Array<bigint>(n);
  let acc = 1n;
  for (let i = 0; i < n; i++) {
    prefix[i] = acc;
    acc = mul(acc, values[i]!);
  }
  let accInv = inv(acc);
  const out = new Array<bigint>(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = mul(accInv, prefix[i]!);
    accInv = mul(accInv, values[i]!);
  }
  return out;
}

/** Signed base-2^W digits of a scalar, least significant first, each in [-HALF, HALF]. */
function recode(scalar: bigint): Int32Array {
  const digits = new Int32Array(WINDOWS);
  let k = scalar;
  for (let w = 0; w < WINDOWS; w++) {
    let d = Number(k & WMASK);
    k >>= WBITS;
    if (d > HALF) {
      d -= FULL;
      k += 1n;
    }
    digits[w] = d;
  }
  return digits;
}

export interface AffinePoint {
  readonly x: bigint;
  readonly y: bigint;
}

/**
 * Affine base + t·G for every tweak t (0 <= t < n), all from one base point. Undefined marks a
 * result at infinity (which BIP32 treats as an invalid child).
 */
export function addTweaksToPoint(baseX: bigint, baseY: bigint, tweaks: readonly bigint[]): (AffinePoint | undefined)[] {
  return addTweaksToPoints(new Array<AffinePoint>(tweaks.length).fill({ x: baseX, y: baseY }), tweaks);
}

/**
 * Below this many points a batch is added up in Jacobian coordinates: the affine loop pays one field inversion
 * per window (about 35 µs, 24 windows) whatever the batch's size, which made a single point cost 0.5 ms.
 */
const JACOBIAN_BELOW = 16;

/** Affine bases[k] + tweaks[k]·G for every k (used for taproot output keys, one base per index). */
export function addTweaksToPoints(bases: readonly AffinePoint[], tweaks: readonly bigint[]): (AffinePoint | undefined)[] {
  table ??= buildTable();
  return tweaks.length < JACOBIAN_BELOW ? addTweaksJacobian(table, bases, tweaks) : addTweaksAffine(table, bases, tweaks);
}

/** The table's entry for a signed digit (non-zero). */
function tableEntry({ xs, ys, negYs }: Table, w: number, d: number): AffinePoint {
  return d > 0 ? { x: xs[w]![d - 1]!, y: ys[w]![d - 1]! } : { x: xs[w]![-d - 1]!, y: negYs[w]![-d - 1]! };
}

/** Same results as the affine loop, for a few points: mixed additions (8M + 3S) and one batched inversion at the end. */
function addTweaksJacobian(table: Table, bases: readonly AffinePoint[], tweaks: readonly bigint[]): (AffinePoint | undefined)[] {
  const out: (AffinePoint | undefined)[] = new Array(tweaks.length);
  const finished: { k: number; x: bigint; y: bigint; z: bigint }[] = [];
  for (let k = 0; k < tweaks.length; k++) {
    const digits = recode(tweaks[k]!);
    let x1 = bases[k]!.x;
    let y1 = bases[k]!.y;
    let z1 = 1n;
    let degenerate = false;
    for (let w = 0; w < WINDOWS && !degenerate; w++) {
      const d = digits[w]!;
      if (d === 0) continue;
      const { x: x2, y: y2 } = tableEntry(table, w, d);
      const z1z1 = mul(z1, z1);
      const u2 = mul(x2, z1z1);
      if (u2 === x1) {
        degenerate = true; // the same x: a doubling or the point at infinity
        break;
      }
      const s2 = mul(y2, mul(z1, z1z1));
      const h = u2 - x1 + P;
      const r = s2 - y1 + P;
      const hh = mul(h, h);
      const hhh = mul(h, hh);
      const v = mul(x1, hh);
      let x3 = mul(r, r) - hhh - 2n * v;
      while (x3 < 0n) x3 += P;
      const y3 = mul(r, v - x3 + P) - mul(y1, hhh);
      x1 = x3;
      y1 = y3 < 0n ? y3 + P : y3;
      z1 = mul(z1, h);
    }
    if (degenerate) {
      const sum = Point.fromAffine(bases[k]!).add(Point.BASE.multiplyUnsafe(tweaks[k]!));
      out[k] = sum.is0() ? undefined : sum.toAffine();
    } else finished.push({ k, x: x1, y: y1, z: z1 });
  }
  if (finished.length === 0) return out;
  const inverses = batchInvert(finished.map((p) => p.z));
  finished.forEach(({ k, x, y }, i) => {
    const zInv = inverses[i]!;
    const zInv2 = mul(zInv, zInv);
    out[k] = { x: mul(x, zInv2), y: mul(y, mul(zInv2, zInv)) };
  });
  return out;
}

/** Every batch's accumulators advance one window at a time with affine additions sharing one inversion per window. */
function addTweaksAffine(table: Table, bases: readonly AffinePoint[], tweaks: readonly bigint[]): (AffinePoint | undefined)[] {
  const { xs, ys, negYs } = table;
  const n = tweaks.length;
  const digits = tweaks.map(recode);
  const accX = bases.map((b) => b.x);
  const accY = bases.map((b) => b.y);
  /** Indices that hit a degenerate addition; finished with noble's general arithmetic. */
  const slow = new Set<number>();
  const active: number[] = [];
  const addX: bigint[] = [];
  const addY: bigint[] = [];
  const denominators: bigint[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    active.length = 0;
    addX.length = 0;
    addY.length = 0;
    denominators.length = 0;
    const rowX = xs[w]!;
    const rowY = ys[w]!;
    const rowNegY = negYs[w]!;
    for (let k = 0; k < n; k++) {
      const d = digits[k]![w]!;
      if (d === 0 || (slow.size > 0 && slow.has(k))) continue;
      const x2 = rowX[Math.abs(d) - 1]!;
      const y2 = d > 0 ? rowY[d - 1]! : rowNegY[-d - 1]!;
      const x1 = accX[k]!;
      if (x2 === x1) {
        slow.add(k);
        continue;
      }
      active.push(k);
      addX.push(x2);
      addY.push(y2);
      // Values only fed to mul() may lie in [0, 2p): it reduces any product below 2^514.
      denominators.push(x2 - x1 + P);
    }
    if (active.length === 0) continue;
    const invs = batchInvert(denominators);
    for (let i = 0; i < active.length; i++) {
      const k = active[i]!;
      const x1 = accX[k]!;
      const y1 = accY[k]!;
      const lambda = mul(addY[i]! - y1 + P, invs[i]!);
      let x3 = mul(lambda, lambda) - x1 - addX[i]!;
      if (x3 < 0n) x3 += P;
      if (x3 < 0n) x3 += P;
      accX[k] = x3;
      const y3 = mul(lambda, x1 - x3 + P) - y1;
      accY[k] = y3 < 0n ? y3 + P : y3;
    }
  }
  const out: (AffinePoint | undefined)[] = accX.map((x, k) => ({ x, y: accY[k]! }));
  for (const k of slow) {
    const sum = Point.fromAffine(bases[k]!).add(Point.BASE.multiplyUnsafe(tweaks[k]!));
    out[k] = sum.is0() ? undefined : sum.toAffine();
  }
  return out;
}
