/**
 * Random sources for coin selection. Selection randomness only protects privacy (it is not a
 * secret), but tests need it reproducible: `seededRandom` gives the same draws for the same seed.
 */
import { randomBytes } from '@noble/hashes/utils.js';

export interface RandomSource {
  /** A uniform integer in [0, bound), for 1 <= bound <= 2^32. */
  nextInt(bound: number): number;
}

/** xoshiro128** (Blackman and Vigna): small, fast, good statistical quality. */
class Xoshiro128 implements RandomSource {
  private readonly s: Uint32Array;
  constructor(seedWords: Uint32Array) {
    this.s = seedWords.slice(0, 4);
    if (this.s.every((w) => w === 0)) this.s[0] = 1; // the all-zero state is a fixed point
  }
  private nextU32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }
  nextInt(bound: number): number {
    if (!Number.isInteger(bound) || bound < 1 || bound > 2 ** 32) throw new RangeError('bound must be an integer in [1, 2^32]');
    // Rejection sampling: no modulo bias.
    const limit = 2 ** 32 - (2 ** 32 % bound);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % bound;
    }
  }
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

/** SplitMix32 expands a seed into the generator state, so nearby seeds give unrelated streams. */
function expandSeed(seed: number): Uint32Array {
  const out = new Uint32Array(4);
  let z = seed >>> 0;
  for (let i = 0; i < 4; i++) {
    z = (z + 0x9e3779b9) >>> 0;
    let x = z;
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
    out[i] = (x ^ (x >>> 16)) >>> 0;
  }
  return out;
}

/** A reproducible random source (for tests and benchmarks). */
export const seededRandom = (seed: number): RandomSource => new Xoshiro128(expandSeed(seed));

/** A random source seeded from the platform's cryptographic generator (the default). */
export function systemRandom(): RandomSource {
  const bytes = randomBytes(16);
  return new Xoshiro128(new Uint32Array(bytes.buffer, bytes.byteOffset, 4));
}
