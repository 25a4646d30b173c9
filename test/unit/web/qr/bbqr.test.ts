import { readFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import QRCode from 'qrcode';
import { base32 } from '@scure/base';
import {
  BBQR_HEADER_LENGTH,
  BbqrError,
  QR_ALPHANUMERIC_CAPACITY_L,
  bbqrJoin,
  bbqrSplit,
  parseBbqrHeader,
  type BbqrEncoding,
} from '../../../../src/web/client/qr/bbqr.js';

const vectorDir = new URL('../../../vectors/bbqr/', import.meta.url);
const vector = (name: string) => new Uint8Array(readFileSync(new URL(name, vectorDir)));
const psbtFiles = ['1in2out.psbt', '1in10out.psbt', '1in100out.psbt'];

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function fitsInVersion(part: string, version: number): boolean {
  try {
    QRCode.create([{ data: part, mode: 'alphanumeric' }], { version, errorCorrectionLevel: 'L' });
    return true;
  } catch {
    return false;
  }
}

describe('BBQr vectors of the specification repository', () => {
  it('decodes the real scan (Z encoding, file type U, every part seen several times) in any order', () => {
    const lines = readFileSync(new URL('real-scan.txt', vectorDir), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    expect(lines).toHaveLength(26);
    expect(new Set(lines.map((line) => line.slice(0, 8))).size).toBe(8);
    for (const parts of [lines, shuffled(lines, 7)]) {
      const { fileType, encoding, data } = bbqrJoin(parts);
      expect(fileType).toBe('U');
      expect(encoding).toBe('Z');
      const text = new TextDecoder().decode(data);
      expect(text).toContain('Zlib compressed');
      expect(text).toContain('PSBT');
    }
  });

  const reference = JSON.parse(readFileSync(new URL('reference-split.json', vectorDir), 'utf8')) as Array<{
    file: string;
    encoding: BbqrEncoding;
    version: number;
    parts: string[];
  }>;
  it.each(reference.map((r) => [r.file, r.encoding, r] as const))(
    'joins the reference implementation\'s split of %s in encoding %s',
    (file, encoding, r) => {
      const joined = bbqrJoin(shuffled(r.parts, r.parts.length));
      expect(joined.encoding).toBe(encoding);
      expect(joined.fileType).toBe('P');
      expect(joined.data).toEqual(vector(file));
      for (const part of r.parts) expect(fitsInVersion(part, r.version)).toBe(true);
    },
  );

  it('has the alphanumeric capacity of every QR version at level L right', () => {
    for (let version = 1; version <= 40; version++) {
      const capacity = QR_ALPHANUMERIC_CAPACITY_L[version] as number;
      expect(fitsInVersion('A'.repeat(capacity), version)).toBe(true);
      expect(fitsInVersion('A'.repeat(capacity + 1), version)).toBe(false);
    }
  });
});

describe('bbqrSplit', () => {
  it.each(psbtFiles.flatMap((file) => (['H', '2', 'Z'] as const).flatMap((enc) => [5, 12, 27].map((v) => [file, enc, v] as const))))(
    '%s in %s at version %i: balanced parts that fit the version and join back',
    (file, encoding, maxVersion) => {
      const data = vector(file);
      const split = bbqrSplit(data, 'P', { encoding, maxVersion });
      // PSBTs compress, so Z stays Z (as Coldcard and Sparrow would choose).
      expect(split.encoding).toBe(encoding);
      expect(split.version).toBeLessThanOrEqual(maxVersion);
      const { parts } = split;
      const unit = encoding === 'H' ? 2 : 8;
      const total = parts.length.toString(36).toUpperCase().padStart(2, '0');
      parts.forEach((part, index) => {
        expect(part.slice(0, BBQR_HEADER_LENGTH)).toBe(`B$${encoding}P${total}${index.toString(36).toUpperCase().padStart(2, '0')}`);
        expect(part).toMatch(/^[0-9A-Z$%*+\-./:]+$/);
        expect(fitsInVersion(part, split.version)).toBe(true);
        if (index < parts.length - 1) {
          expect(part.length).toBe((parts[0] as string).length);
          expect((part.length - BBQR_HEADER_LENGTH) % unit).toBe(0);
        }
      });
      // Balanced: as few parts as the version allows, and no part longer than that count needs.
      const text = parts.reduce((n, part) => n + part.length - BBQR_HEADER_LENGTH, 0);
      const room = (QR_ALPHANUMERIC_CAPACITY_L[split.version] as number) - BBQR_HEADER_LENGTH;
      expect(parts.length).toBe(Math.ceil(text / (room - (room % unit))));
      const perPart = (parts[0] as string).length - BBQR_HEADER_LENGTH;
      if (parts.length > 1) expect(Math.ceil(text / (perPart - unit))).toBeGreaterThan(parts.length);
      expect(bbqrJoin(shuffled(parts, 3)).data).toEqual(data);
    },
  );

  it('chooses the smallest version that holds the whole file in one part when it can', () => {
    const data = vector('1in2out.psbt');
    const split = bbqrSplit(data, 'P', { maxVersion: 40 });
    expect(split.parts).toHaveLength(1);
    expect(split.parts[0]?.slice(0, 8)).toBe('B$ZP0100');
    expect(fitsInVersion(split.parts[0] as string, split.version - 1)).toBe(false);
  });

  it('falls back from Z to base32 when compression does not help', () => {
    const random = new Uint8Array(600).map((_, i) => (i * 2654435761) >>> 24);
    const split = bbqrSplit(random, 'B', { maxVersion: 10 });
    expect(split.encoding).toBe('2');
    expect(bbqrJoin(split.parts).data).toEqual(random);
  });

  it('refuses what it cannot encode', () => {
    const data = vector('1in2out.psbt');
    expect(() => bbqrSplit(data, 'p', { maxVersion: 10 })).toThrow(BbqrError);
    expect(() => bbqrSplit(data, 'P', { maxVersion: 0 })).toThrow(/version/);
    expect(() => bbqrSplit(data, 'P', { maxVersion: 41 })).toThrow(/version/);
    expect(() => bbqrSplit(new Uint8Array(), 'P', { maxVersion: 10 })).toThrow(/nothing/);
    // Version 1 holds 16 base32 characters a part: 60 kB needs more than 1295 parts.
    expect(() => bbqrSplit(new Uint8Array(60_000).map((_, i) => i * 7), 'P', { maxVersion: 1, encoding: '2' })).toThrow(/1295/);
  });
});

describe('bbqrJoin refuses broken series with a clear message', () => {
  const { parts } = bbqrSplit(vector('1in10out.psbt'), 'P', { maxVersion: 8, encoding: '2' });

  it('needs every part', () => {
    expect(parts.length).toBeGreaterThan(2);
    expect(() => bbqrJoin(parts.slice(1))).toThrow('part 1 of');
    expect(() => bbqrJoin([])).toThrow(BbqrError);
  });

  it('refuses mixed series and conflicting repeats', () => {
    const other = bbqrSplit(vector('1in2out.psbt'), 'P', { maxVersion: 8, encoding: 'H' }).parts;
    expect(() => bbqrJoin([...parts, other[0] as string])).toThrow(/different BBQr series/);
    const tampered = `${(parts[1] as string).slice(0, -1)}${(parts[1] as string).endsWith('A') ? 'B' : 'A'}`;
    expect(() => bbqrJoin([...parts, tampered])).toThrow(/two contents/);
    expect(bbqrJoin([...parts, parts[1] as string]).data).toEqual(vector('1in10out.psbt'));
  });

  it('refuses bad characters, odd hex and damaged compressed data', () => {
    expect(() => bbqrJoin(['B$2P0100ABC1'])).toThrow(/base32/);
    expect(() => bbqrJoin(['B$HP0100ABC'])).toThrow(/hex/);
    expect(() => bbqrJoin(['B$ZP0100AAAAAAAA'])).toThrow(/damaged/);
    expect(() => bbqrJoin(['hello'])).toThrow(/not a BBQr part/);
  });

  it('refuses a decompression bomb', () => {
    const bomb = deflateRawSync(new Uint8Array(9 * 1024 * 1024), { windowBits: 10, level: 9 });
    const body = base32.encode(new Uint8Array(bomb)).replace(/=+$/, '');
    expect(() => bbqrJoin([`B$ZP0100${body}`])).toThrow(/too large/);
  });

  it('reads headers strictly', () => {
    expect(parseBbqrHeader('B$ZP0A09XYZ')).toEqual({ encoding: 'Z', fileType: 'P', total: 10, index: 9 });
    expect(parseBbqrHeader('B$ZP0A0AXYZ')).toBeUndefined(); // index past the total
    expect(parseBbqrHeader('B$XP0100')).toBeUndefined(); // unknown encoding
    expect(parseBbqrHeader('B$ZP0000')).toBeUndefined();
    expect(parseBbqrHeader('ur:crypto-psbt/aeae')).toBeUndefined();
  });
});

describe('BBQr round trips (property)', () => {
  it('joins any split of any bytes, in any order', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 3000 }),
        fc.constantFrom<BbqrEncoding>('H', '2', 'Z'),
        fc.integer({ min: 3, max: 20 }),
        fc.integer({ min: 1, max: 1000 }),
        (data, encoding, maxVersion, seed) => {
          const split = bbqrSplit(data, 'P', { encoding, maxVersion });
          const joined = bbqrJoin(shuffled(split.parts, seed));
          expect(joined.data).toEqual(data);
          expect(joined.fileType).toBe('P');
          for (const part of split.parts) {
            expect(part.length).toBeLessThanOrEqual(QR_ALPHANUMERIC_CAPACITY_L[split.version] as number);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
