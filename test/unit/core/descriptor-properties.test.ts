import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CoreError } from '../../../src/core/errors.js';
import { NETWORKS } from '../../../src/core/network.js';
import { DESCRIPTOR_TYPES, DescriptorDeriver, addChecksum, formatDescriptor, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { loadFixture } from '../../support/fixtures.js';

const regtest = NETWORKS.regtest;
const wallets = loadFixture('wallets');
const tpubs: string[] = [...new Set(Object.values<any>(wallets).flatMap((w) => w.keys.map((k: any) => k.tpub as string)))];

const step = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const origin = fc.record({
  fingerprint: fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((n) => n.toString(16).padStart(8, '0')),
  path: fc.array(fc.tuple(step, fc.boolean()), { maxLength: 5 }),
});
const keyText = fc
  .record({ origin: fc.option(origin, { nil: undefined }), tpub: fc.constantFrom(...tpubs), steps: fc.array(step, { maxLength: 3 }), wildcard: fc.boolean() })
  .map(({ origin: o, tpub, steps, wildcard }) => {
    const prefix = o ? `[${[o.fingerprint, ...o.path.map(([n, h]) => (h ? `${n}h` : `${n}`))].join('/')}]` : '';
    return prefix + [tpub, ...steps.map(String), ...(wildcard ? ['*'] : [])].join('/');
  });

/** Canonical descriptor texts of every supported type. */
const canonical = fc
  .record({ type: fc.constantFrom(...DESCRIPTOR_TYPES), keys: fc.array(keyText, { minLength: 1, maxLength: 4 }), t: fc.nat() })
  .map(({ type, keys, t }) => {
    const threshold = (t % keys.length) + 1;
    const multi = (name: string) => `${name}(${threshold},${keys.join(',')})`;
    const body = {
      pkh: `pkh(${keys[0]})`,
      wpkh: `wpkh(${keys[0]})`,
      tr: `tr(${keys[0]})`,
      'sh-wpkh': `sh(wpkh(${keys[0]}))`,
      'wsh-multi': `wsh(${multi('multi')})`,
      'wsh-sortedmulti': `wsh(${multi('sortedmulti')})`,
      'sh-wsh-multi': `sh(wsh(${multi('multi')}))`,
      'sh-wsh-sortedmulti': `sh(wsh(${multi('sortedmulti')}))`,
      'sh-multi': `sh(${multi('multi')})`,
      'sh-sortedmulti': `sh(${multi('sortedmulti')})`,
    }[type];
    return addChecksum(body);
  });

function typedOrOk(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CoreError);
    expect((e as CoreError).code).toMatch(/^[a-z_]+$/);
  }
}

describe('descriptor properties', () => {
  it('print(parse(d)) === d for canonical descriptors of every supported type', () => {
    fc.assert(
      fc.property(canonical, (text) => {
        const parsed = parseDescriptor(text, regtest);
        expect(formatDescriptor(parsed)).toBe(text);
        expect(formatDescriptor(parseDescriptor(formatDescriptor(parsed), regtest))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it("apostrophe markers and a missing checksum print as the canonical form", () => {
    fc.assert(
      fc.property(canonical, (text) => {
        const body = text.split('#')[0]!;
        const apostrophes = body.replace(/\[[^\]]*\]/g, (origin) => origin.replace(/(\d)h/g, "$1'"));
        expect(formatDescriptor(parseDescriptor(apostrophes, regtest))).toBe(text);
      }),
      { numRuns: 100 },
    );
  });

  it('one-character corruptions of a checksummed descriptor are refused with a typed error', () => {
    fc.assert(
      fc.property(canonical, fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), fc.constantFrom('replace', 'insert', 'delete'), (text, pos, c, op) => {
        const i = pos % text.length;
        const changed =
          op === 'replace' ? text.slice(0, i) + c + text.slice(i + 1) : op === 'insert' ? text.slice(0, i) + c + text.slice(i) : text.slice(0, i) + text.slice(i + 1);
        if (changed === text) return;
        expect(() => parseDescriptor(changed, regtest)).toThrow(CoreError);
      }),
      { numRuns: 400 },
    );
  });

  it('arbitrary text and mutated bodies give typed errors, never crashes', () => {
    const bodies = canonical.map((t) => t.split('#')[0]!);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), bodies.chain((b) => fc.tuple(fc.nat(b.length), fc.nat(b.length)).map(([a, z]) => b.slice(Math.min(a, z), Math.max(a, z))))), (text) => {
        typedOrOk(() => {
          const parsed = parseDescriptor(text, regtest);
          new DescriptorDeriver(parsed).deriveRange(0, 2);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('keys of another network are refused as wrong_network', () => {
    fc.assert(
      fc.property(canonical, (text) => {
        const error = (() => {
          try {
            parseDescriptor(text, NETWORKS.mainnet);
          } catch (e) {
            return e as CoreError;
          }
          return undefined;
        })();
        expect(error?.code).toBe('wrong_network');
      }),
      { numRuns: 50 },
    );
  });
});
