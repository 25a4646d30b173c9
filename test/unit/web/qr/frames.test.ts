import { readFileSync } from 'node:fs';
import { hex } from '@scure/base';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  BBQR_MAX_VERSION,
  PsbtScanAccumulator,
  QrScanError,
  psbtFrames,
  takeFrames,
  type QrFormat,
  type ScanProgress,
} from '../../../../src/web/client/qr/frames.js';
import { QR_ALPHANUMERIC_CAPACITY_L, bbqrSplit } from '../../../../src/web/client/qr/bbqr.js';
import { loadFixture } from '../../../support/fixtures.js';

const psbts = loadFixture('psbts');
const psbtOf = (wallet: string, stage: number) => new Uint8Array(Buffer.from(psbts[wallet].stages[stage].psbt as string, 'base64'));
const big = psbtOf('w_shwsh2of3', 2);
// The 167-byte PSBT of the BC-UR registry's test vector.
const small = hex.decode(JSON.parse(readFileSync(new URL('../../../vectors/ur/bc-ur.json', import.meta.url), 'utf8')).psbt.psbtHex);

function collect(frames: Iterable<string>, accumulator = new PsbtScanAccumulator()): ScanProgress[] {
  const seen: ScanProgress[] = [];
  for (const frame of frames) {
    const progress = accumulator.push(frame);
    seen.push(progress);
    if (progress.state === 'complete') break;
  }
  return seen;
}

describe('psbtFrames', () => {
  it('BBQr: a fixed series in Z encoding, sized for the chosen version, repeated forever', () => {
    const source = psbtFrames(big, 'bbqr');
    expect(source.cycleLength).toBeGreaterThan(1);
    expect(source.qrVersion).toBe(BBQR_MAX_VERSION);
    const frames = takeFrames(source, source.cycleLength * 2 + 1);
    expect(frames.slice(source.cycleLength, source.cycleLength * 2)).toEqual(frames.slice(0, source.cycleLength));
    expect(frames.at(-1)).toBe(frames[0]);
    for (const frame of frames) {
      expect(frame).toMatch(/^B\$ZP/);
      expect(frame.length).toBeLessThanOrEqual(QR_ALPHANUMERIC_CAPACITY_L[BBQR_MAX_VERSION] as number);
    }
  });

  it('UR: uppercase crypto-psbt parts that keep changing after the first cycle', () => {
    const source = psbtFrames(big, 'ur');
    expect(source.cycleLength).toBeGreaterThan(1);
    const frames = takeFrames(source, source.cycleLength * 3);
    expect(new Set(frames).size).toBe(frames.length);
    frames.forEach((frame, i) => expect(frame).toMatch(new RegExp(`^UR:CRYPTO-PSBT/${i + 1}-${source.cycleLength}/[A-Z]+$`)));
  });

  it.each(['ur', 'bbqr'] as const)('a small PSBT is a single still frame in %s', (format) => {
    const source = psbtFrames(small, format);
    expect(source.cycleLength).toBe(1);
    const frame = source.next();
    expect(source.next()).toBe(frame);
    expect(collect([frame]).at(-1)).toEqual({ state: 'complete', format, psbt: small });
  });

  it('refuses bytes that are not a PSBT', () => {
    expect(() => psbtFrames(new Uint8Array([1, 2, 3, 4, 5, 6]), 'ur')).toThrow(QrScanError);
    expect(() => psbtFrames(new Uint8Array(), 'bbqr')).toThrow(QrScanError);
  });
});

describe('PsbtScanAccumulator', () => {
  it.each(['ur', 'bbqr'] as const)('%s: reports growing progress, then the PSBT, in scanning order with repeats', (format) => {
    const source = psbtFrames(big, format);
    const frames = takeFrames(source, source.cycleLength);
    const scanned = [frames[1], frames[1], ...frames.slice(2).reverse(), frames[0]] as string[];
    const seen = collect(scanned);
    const last = seen.at(-1);
    expect(last).toEqual({ state: 'complete', format, psbt: big });
    const fractions = seen.map((p) => (p.state === 'collecting' ? p.fraction : 1));
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
    expect(seen[0]).toMatchObject({ state: 'collecting', format, received: 1, total: source.cycleLength });
    expect(seen[1]).toMatchObject({ received: 1 }); // a repeat adds nothing
  });

  it('starts over when another series appears, in either format', () => {
    const accumulator = new PsbtScanAccumulator();
    const bbqr = psbtFrames(big, 'bbqr');
    accumulator.push(bbqr.next());
    const ur = psbtFrames(psbtOf('w_shwsh2of3', 1), 'ur');
    const seen = collect(takeFrames(ur, ur.cycleLength), accumulator);
    expect(seen[0]).toMatchObject({ state: 'collecting', format: 'ur', received: 1 });
    expect(seen.at(-1)).toEqual({ state: 'complete', format: 'ur', psbt: psbtOf('w_shwsh2of3', 1) });
    // Once complete it stays complete.
    expect(accumulator.push('B$ZP0100AAAA')).toEqual(seen.at(-1));
  });

  it('starts over on a UR of another PSBT with the same number of parts', () => {
    const first = psbtFrames(psbtOf('w_wsh2of3', 1), 'ur');
    const second = psbtFrames(psbtOf('w_wsh2of3', 2), 'ur');
    expect(second.cycleLength).toBe(first.cycleLength);
    const accumulator = new PsbtScanAccumulator();
    const firstFrames = takeFrames(first, first.cycleLength - 1);
    expect(collect(firstFrames, accumulator).at(-1)).toMatchObject({ state: 'collecting', received: first.cycleLength - 1 });
    const seen = collect(takeFrames(second, second.cycleLength), accumulator);
    expect(seen[0]).toMatchObject({ state: 'collecting', format: 'ur', received: 1 });
    expect(seen.at(-1)).toEqual({ state: 'complete', format: 'ur', psbt: psbtOf('w_wsh2of3', 2) });
  });

  it('starts over on a BBQr series of another PSBT', () => {
    const accumulator = new PsbtScanAccumulator();
    const first = psbtFrames(big, 'bbqr');
    accumulator.push(first.next());
    const other = bbqrSplit(psbtOf('w_wsh2of3', 2), 'P', { maxVersion: 10, encoding: 'Z' }).parts;
    const seen = collect(other, accumulator);
    expect(seen[0]).toMatchObject({ received: 1, total: other.length });
    expect(seen.at(-1)).toEqual({ state: 'complete', format: 'bbqr', psbt: psbtOf('w_wsh2of3', 2) });
  });

  it('refuses what is not a PSBT, with a clear message, and keeps what it has', () => {
    const accumulator = new PsbtScanAccumulator();
    const source = psbtFrames(big, 'bbqr');
    const frames = takeFrames(source, source.cycleLength);
    accumulator.push(frames[0] as string);
    expect(() => accumulator.push('https://example.com')).toThrow(/neither a UR nor a BBQr/);
    expect(() => accumulator.push('B$ZT0100AAAA')).toThrow(/other than a PSBT/);
    expect(() => accumulator.push('B$Q')).toThrow(/damaged header/);
    expect(() => accumulator.push(`${(frames[1] as string).slice(0, 8)}ABC1`)).toThrow(/valid base32/);
    expect(() => accumulator.push('B$HP0100ABC')).toThrow(/valid hex/);
    expect(() => accumulator.push('ur:crypto-account/aeae')).toThrow(/not a PSBT/);
    const seen = collect(frames.slice(1), accumulator);
    expect(seen.at(-1)).toEqual({ state: 'complete', format: 'bbqr', psbt: big });
  });

  it('refuses a complete series that does not hold a PSBT', () => {
    const text = bbqrSplit(new TextEncoder().encode('not a psbt at all'), 'P', { maxVersion: 5 }).parts;
    expect(() => collect(text)).toThrow(/not a PSBT/);
  });
});

describe('frames round trip (property)', () => {
  it('any PSBT-shaped bytes come back through either format from a shuffled, partial scan', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 4000 }),
        fc.constantFrom<QrFormat>('ur', 'bbqr'),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (body, format, seed) => {
          const psbt = new Uint8Array([0x70, 0x73, 0x62, 0x74, 0xff, ...body]);
          const source = psbtFrames(psbt, format);
          // Three cycles, a random third of them missed, the rest in a scrambled order.
          let state = seed;
          const random = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
          const frames = takeFrames(source, source.cycleLength * 3 + 5)
            .map((frame) => ({ frame, key: random(), keep: random() > 0.33 }))
            .filter((f) => f.keep)
            .sort((a, b) => a.key - b.key)
            .map((f) => f.frame);
          const all = takeFrames(source, source.cycleLength * 40); // the animation goes on until the scan completes
          const seen = collect([...frames, ...all]);
          expect(seen.at(-1)).toEqual({ state: 'complete', format, psbt });
        },
      ),
      { numRuns: 80 },
    );
  });
});
