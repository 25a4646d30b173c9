import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hex } from '@scure/base';
import { UR, URDecoder, UREncoder } from '@ngraveio/bc-ur';
import {
  UR_PSBT_TYPE,
  UrError,
  UrPsbtDecoder,
  cborByteString,
  readCborByteString,
  urPsbtEncoder,
} from '../../../../src/web/client/qr/ur.js';
import { loadFixture } from '../../../support/fixtures.js';

const vectors = JSON.parse(readFileSync(new URL('../../../vectors/ur/bc-ur.json', import.meta.url), 'utf8'));
const fixturePsbt = (wallet: string, stage = 0) =>
  new Uint8Array(Buffer.from(loadFixture('psbts')[wallet].stages[stage].psbt as string, 'base64'));

/** Feeds parts until the decoder completes; returns how many it took, or -1 when they ran out first. */
function feed(decoder: UrPsbtDecoder, parts: Iterable<string>): number {
  let n = 0;
  for (const part of parts) {
    n++;
    decoder.receive(part);
    if (decoder.result()) return n;
  }
  return -1;
}

describe('UR vectors of BCR-2020-005/006 and the reference implementation', () => {
  const psbtBytes = hex.decode(vectors.psbt.psbtHex);

  it('decodes the crypto-psbt vector, under either type name and in either case', () => {
    for (const ur of [vectors.psbt.cryptoPsbtUr, vectors.psbt.ur, (vectors.psbt.cryptoPsbtUr as string).toUpperCase()]) {
      const decoder = new UrPsbtDecoder();
      expect(decoder.receive(ur)).toBe('accepted');
      expect(decoder.result()).toEqual(psbtBytes);
      expect(decoder.progress()).toBe(1);
    }
  });

  it('encodes the vector PSBT to exactly the crypto-psbt UR of the registry', () => {
    expect(hex.encode(cborByteString(psbtBytes))).toBe(vectors.psbt.cborHex);
    const stream = urPsbtEncoder(psbtBytes, 1000);
    expect(stream.pureParts).toBe(1);
    expect(stream.nextPart()).toBe(vectors.psbt.cryptoPsbtUr);
  });

  it('the library encodes the reference multi-part vector exactly (pure parts, then fountain parts)', () => {
    const message = hex.decode(vectors.bytesMultipart.messageHex);
    const encoder = new UREncoder(new UR(Buffer.from(cborByteString(message)), 'bytes'), vectors.bytesMultipart.maxFragmentLength);
    const parts = Array.from({ length: 20 }, () => encoder.nextPart());
    expect(parts).toEqual(vectors.bytesMultipart.parts);
    const single = hex.decode(vectors.bytesSinglePart.messageHex);
    expect(UREncoder.encodeSinglePart(new UR(Buffer.from(cborByteString(single)), 'bytes'))).toBe(vectors.bytesSinglePart.ur);
  });

  it('the library decodes the reference vector from parts past the first cycle, out of order', () => {
    const message = hex.decode(vectors.bytesMultipart.messageHex);
    const parts = vectors.bytesMultipart.parts as string[];
    // Fountain parts 10..20 mixed with some of the pure parts, in a shuffled order.
    const mixed = new URDecoder();
    for (const part of [parts[15], parts[3], parts[11], parts[0], parts[19], parts[7], parts[12], parts[5], parts[1], parts[8], parts[16], parts[2], parts[6], parts[4]]) {
      mixed.receivePart(part as string);
    }
    expect(mixed.isSuccess()).toBe(true);
    expect(readCborByteString(new Uint8Array(mixed.resultUR().cbor))).toEqual(message);
  });
});

describe('crypto-psbt of a real PSBT, multi-part', () => {
  const psbt = fixturePsbt('w_wsh2of3', 2);

  it('decodes from the pure parts alone, in any order', () => {
    const stream = urPsbtEncoder(psbt, 100);
    expect(stream.pureParts).toBeGreaterThan(5);
    const pure = Array.from({ length: stream.pureParts }, () => stream.nextPart());
    for (const part of pure) expect(part).toMatch(new RegExp(`^ur:${UR_PSBT_TYPE}/\\d+-${stream.pureParts}/[a-z]+$`));
    const decoder = new UrPsbtDecoder();
    expect(feed(decoder, [...pure].reverse())).toBe(stream.pureParts);
    expect(decoder.result()).toEqual(psbt);
  });

  it('decodes from fountain parts produced after the first cycle, with none of the pure parts', () => {
    const stream = urPsbtEncoder(psbt, 100);
    for (let i = 0; i < stream.pureParts; i++) stream.nextPart(); // the first cycle is missed entirely
    const later = Array.from({ length: stream.pureParts * 6 }, () => stream.nextPart());
    const decoder = new UrPsbtDecoder();
    const used = feed(decoder, later.filter((_, i) => i % 3 !== 1)); // and a third of the rest is missed too
    expect(used).toBeGreaterThan(0);
    expect(decoder.result()).toEqual(psbt);
  });

  it('reports progress; a repeat adds nothing and a part of another message is ignored', () => {
    const stream = urPsbtEncoder(psbt, 100);
    const other = urPsbtEncoder(fixturePsbt('w_wsh2of3', 1), 100);
    const decoder = new UrPsbtDecoder();
    const first = stream.nextPart();
    expect(decoder.receive(first)).toBe('accepted');
    expect(decoder.expectedParts()).toBe(stream.pureParts);
    const before = decoder.progress();
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(1);
    expect(decoder.receive(first)).toBe('accepted');
    expect(decoder.progress()).toBe(before);
    expect(decoder.receive(other.nextPart())).toBe('ignored');
    expect(decoder.result()).toBeUndefined();
  });

  it('refuses other UR types and damaged parts', () => {
    const decoder = new UrPsbtDecoder();
    expect(() => decoder.receive(vectors.bytesSinglePart.ur)).toThrow(/not a PSBT/);
    expect(() => decoder.receive('ur:crypto-psbt/1-3/lpadaxcsencylobemohsgmoyadhdzz')).toThrow(UrError);
    const part = urPsbtEncoder(psbt, 100).nextPart();
    const flipped = part.slice(0, -6) + (part.slice(-6, -5) === 'a' ? 'e' : 'a') + part.slice(-5);
    expect(() => decoder.receive(flipped)).toThrow(/damaged/);
  });

  it('refuses a UR whose CBOR is not a byte string of the stated length', () => {
    expect(() => readCborByteString(new Uint8Array([0x83, 1, 2, 3]))).toThrow(/byte string/);
    expect(() => readCborByteString(new Uint8Array([0x43, 1, 2]))).toThrow(/length/);
    expect(() => readCborByteString(new Uint8Array([0x58]))).toThrow(UrError);
  });
});

describe('UR round trips (property)', () => {
  it('any bytes survive CBOR wrapping, fountain coding and decoding from a random subset of later parts', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 2500 }),
        fc.integer({ min: 30, max: 300 }),
        fc.integer({ min: 0, max: 20 }),
        fc.infiniteStream(fc.boolean()),
        (data, fragment, skip, keep) => {
          expect(readCborByteString(cborByteString(data))).toEqual(data);
          const stream = urPsbtEncoder(data, fragment);
          for (let i = 0; i < skip; i++) stream.nextPart();
          const decoder = new UrPsbtDecoder();
          const keeps = keep[Symbol.iterator]();
          for (let i = 0; i < 50 * stream.pureParts + 50 && !decoder.result(); i++) {
            const part = stream.nextPart();
            if (keeps.next().value) decoder.receive(part);
          }
          expect(decoder.result()).toEqual(data);
        },
      ),
      { numRuns: 60 },
    );
  });
});
