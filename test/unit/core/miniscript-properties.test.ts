/**
 * Miniscript properties over random policies of the service's simple form: every compiled policy is
 * sane and round-trips through its descriptor; every planned path finalizes from signatures of its own
 * keys, with as many witness items as planned and no more bytes than planned.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { keysOf } from '../../../src/core/spend-plan.js';
import {
  compilePolicy, deriveMiniscriptOutput, miniscriptOutputPlan, MiniscriptError, parseMiniscriptDescriptor, printMiniscript, parseMiniscript,
  type PolicyPath, type SimplePolicy,
} from '../../../src/core/miniscript/index.js';

const POOL = Array.from({ length: 24 }, (_, i) => toHex(secp256k1.getPublicKey(fromHex((i + 1).toString(16).padStart(64, '0')), true)));

const lock = fc.oneof(
  fc.integer({ min: 1, max: 0xffff }).map((older) => ({ older })),
  fc.integer({ min: 1, max: 499_999_999 }).map((after) => ({ after })),
);
const group = fc.integer({ min: 1, max: 4 }).chain((n) => fc.record({ n: fc.constant(n), threshold: fc.integer({ min: 1, max: n }) }));

/** Primary plus up to three recoveries, each with its own keys from the pool. */
const policy: fc.Arbitrary<SimplePolicy> = fc
  .record({ script: fc.constantFrom('wsh' as const, 'tr' as const), primary: group, recoveries: fc.array(fc.tuple(group, lock), { maxLength: 3 }) })
  .map(({ script, primary, recoveries }) => {
    let next = 0;
    const take = (n: number) => POOL.slice(next, (next += n));
    const paths: PolicyPath[] = [{ threshold: primary.threshold, keys: take(primary.n) }];
    for (const [g, l] of recoveries) paths.push({ threshold: g.threshold, keys: take(g.n), ...l });
    return { script, paths };
  });

/** The same with one recovery reusing the primary's keys (decaying, or with added keys): wsh's thresh form. */
const sharedPolicy: fc.Arbitrary<SimplePolicy> = fc
  .record({ n: fc.integer({ min: 2, max: 4 }), extra: fc.integer({ min: 0, max: 2 }), older: fc.integer({ min: 1, max: 0xffff }), t: fc.integer({ min: 1, max: 4 }), drop: fc.integer({ min: 0, max: 3 }) })
  .filter(({ n, extra, t, drop }) => extra > 0 || (Math.min(t, n) > 1 && drop > 0))
  .map(({ n, extra, older, t, drop }) => {
    const threshold = Math.min(t, n);
    const recoveryThreshold = Math.max(1, threshold - Math.min(drop, threshold - 1));
    // (extra 0 and the same threshold would allow nothing new: the compiler refuses that, tested below.)
    return {
      script: 'wsh' as const,
      paths: [{ threshold, keys: POOL.slice(0, n) }, { threshold: recoveryThreshold, keys: POOL.slice(0, n + extra), older }],
    };
  });

function checkPlan(p: SimplePolicy): void {
  const compiled = compilePolicy(p);
  const desc = parseMiniscriptDescriptor(compiled.descriptor, NETWORKS.regtest);
  for (const leaf of desc.leaves) expect(printMiniscript(parseMiniscript(leaf.text, desc.kind === 'tr' ? 'tapscript' : 'wsh'))).toBe(leaf.text);
  const output = deriveMiniscriptOutput(desc, 0);
  const plan = miniscriptOutputPlan(desc, output);
  // One planned path per policy path at least (a thresh may list the recovery's key choices apart).
  expect(plan.paths.length).toBeGreaterThanOrEqual(p.paths.length);
  const schnorr = desc.kind === 'tr';
  for (const path of plan.paths) {
    const own = new Set(keysOf(path.signers));
    const final = path.finalize((i) => (own.has(i) ? new Uint8Array(schnorr ? 64 : 72).fill(i + 1) : undefined));
    if (typeof final === 'string') throw new Error(`${path.name}: ${final}`);
    const sizes = final.witness.map((w) => w.length);
    expect(sizes.length, path.name).toBe(path.size.witness.length);
    expect(sizes.reduce((a, b) => a + b, 0), path.name).toBeLessThanOrEqual(path.size.witness.reduce((a, b) => a + b, 0));
  }
}

describe('compiled policies', () => {
  it('are sane, and each planned path finalizes within its planned size', () => {
    fc.assert(fc.property(policy, (p) => checkPlan(p)), { numRuns: 150 });
  });

  it('a recovery that reuses the primary keys (wsh thresh form) too', () => {
    fc.assert(fc.property(sharedPolicy, (p) => checkPlan(p)), { numRuns: 100 });
  });

  it('a recovery with the primary keys and threshold is refused: it would allow nothing new', () => {
    expect(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 1, keys: POOL.slice(0, 2) }, { threshold: 1, keys: POOL.slice(0, 2), older: 1 }] })).toThrow(/allows nothing/);
  });

  it('a recovery that shares only some keys is refused with a reason', () => {
    expect(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 2, keys: POOL.slice(0, 3) }, { threshold: 1, keys: POOL.slice(2, 4), older: 5 }] })).toThrow(MiniscriptError);
  });
});
