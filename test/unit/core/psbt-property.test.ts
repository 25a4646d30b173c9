/** Malformed PSBTs (random bytes, truncated or mutated valid ones) give typed errors, never crashes. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { base64 } from '@scure/base';
import {
  checkPartialSignatures,
  decodePsbt,
  finalizePsbt,
  parsePsbt,
  psbtToBase64,
  serializePsbt,
  PsbtError,
} from '../../../src/core/psbt/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import { allFixturePsbts } from './psbt-support.js';

const samples = allFixturePsbts().map((f) => base64.decode(f.psbt));
const MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);

/** Parses; on success everything downstream must work too; on failure the error must be a PsbtError. */
function exercise(input: Uint8Array | string): void {
  let psbt;
  try {
    psbt = parsePsbt(input);
  } catch (e) {
    if (!(e instanceof PsbtError)) throw e;
    expect(e.code).toMatch(/^[a-z0-9_]+$/);
    return;
  }
  decodePsbt(psbt, NETWORKS.regtest);
  checkPartialSignatures(psbt);
  finalizePsbt(psbt);
  // Whatever parsed must re-parse from its own serialisation.
  expect(psbtToBase64(parsePsbt(serializePsbt(psbt)))).toBe(psbtToBase64(psbt));
}

describe('PSBT parsing never crashes', () => {
  it('random bytes, with and without the magic prefix', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, withMagic) => {
        exercise(withMagic ? Uint8Array.from([...MAGIC, ...bytes]) : bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it('random text as base64', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (text) => exercise(text)), { numRuns: 1000 });
  });

  it('every truncation of the fixture PSBTs (one per wallet stage kind and the version 2 one)', () => {
    const chosen = [samples[0]!, samples[samples.length - 1]!, samples[samples.length - 3]!];
    for (const sample of chosen) {
      for (let n = 0; n < sample.length; n++) {
        expect(() => parsePsbt(sample.subarray(0, n))).toThrow(PsbtError);
      }
    }
  });

  it('fixture PSBTs with random bytes changed, inserted or removed', () => {
    const mutation = fc.record({
      sample: fc.nat({ max: samples.length - 1 }),
      edits: fc.array(
        fc.record({ kind: fc.constantFrom('set', 'insert', 'delete'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
        { minLength: 1, maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(mutation, ({ sample, edits }) => {
        const bytes = [...samples[sample]!];
        for (const edit of edits) {
          const at = edit.at % (bytes.length + 1);
          if (edit.kind === 'set' && at < bytes.length) bytes[at] = edit.byte;
          else if (edit.kind === 'insert') bytes.splice(at, 0, edit.byte);
          else bytes.splice(at, 1);
        }
        exercise(Uint8Array.from(bytes));
      }),
      { numRuns: 1000 },
    );
  });
});
