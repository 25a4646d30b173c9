/** The official BIP174 / BIP371 / BIP370 test vectors (see test/vectors/bip174-psbt.json and bip370-psbt-v2.json). */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { decodePsbt, parsePsbt, psbtToBase64, PsbtError } from '../../../src/core/psbt/index.js';
import { NETWORKS } from '../../../src/core/network.js';

const vector = (name: string) => JSON.parse(readFileSync(new URL(`../../vectors/${name}`, import.meta.url), 'utf8'));

for (const file of ['bip174-psbt.json', 'bip370-psbt-v2.json']) {
  const v = vector(file);
  describe(file, () => {
    for (const c of v.invalid) {
      it(`refuses: ${c.description}`, () => {
        expect(() => parsePsbt(c.base64)).toThrow(PsbtError);
      });
    }
    for (const c of v.valid) {
      it(`accepts: ${c.description}`, () => {
        const psbt = parsePsbt(c.base64);
        expect(() => decodePsbt(psbt, NETWORKS.mainnet)).not.toThrow();
        if (psbt.version === 0) {
          // Written back in Core's order, a version 0 PSBT is byte for byte the same.
          expect(psbtToBase64(psbt)).toBe(c.base64);
        } else {
          expect(psbt.tx.locktime).toBe(c.expected.locktime);
          expect(psbt.tx.inputs[0]!.sequence).toBe(c.expected.sequence);
          if (c.expected.tx_modifiable !== undefined) expect(psbt.txModifiable).toBe(c.expected.tx_modifiable);
          // Its version 0 form carries the same transaction and fields.
          const v0 = parsePsbt(psbtToBase64(psbt));
          expect(v0.version).toBe(0);
          expect(v0.tx).toEqual(psbt.tx);
          expect(v0.outputs.map((o) => o.bip32Derivations)).toEqual(psbt.outputs.map((o) => o.bip32Derivations));
        }
      });
    }
  });
}
