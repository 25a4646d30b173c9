import { describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { parsePsbt } from '../../../src/core/psbt/codec.js';
import { finalSignerKeys } from '../../../src/core/psbt/final-signers.js';
import { finalizePsbt } from '../../../src/core/psbt/finalize.js';
import { fixturePsbts } from './psbt-support.js';

describe('the keys that signed a finalized input, read from its final scriptSig and witness', () => {
  for (const w of fixturePsbts()) {
    it(`${w.wallet}: exactly the keys whose signatures Core collected, none of the keys that did not sign`, () => {
      const signed = parsePsbt(w.stages[w.stages.length - 1]!.psbt);
      const finalized = finalizePsbt(signed).psbt;
      expect(finalized.inputs.every((i) => i.partialSigs.length === 0 && !i.tapKeySig)).toBe(true);
      signed.inputs.forEach((input, index) => {
        if (input.tapKeySig) {
          // The finalizer drops the internal key: the output key is named, or the internal key where the input keeps it.
          expect(finalSignerKeys(finalized, index).map(toHex)).toEqual([toHex(input.witnessUtxo!.script.subarray(2))]);
          const kept = { ...finalized, inputs: finalized.inputs.map((i, n) => (n === index ? { ...i, tapInternalKey: input.tapInternalKey! } : i)) };
          expect(finalSignerKeys(kept, index).map(toHex)).toEqual([toHex(input.tapInternalKey!)]);
          return;
        }
        const expected = input.partialSigs.map((s) => toHex(s.pubkey));
        expect(expected.length).toBeGreaterThan(0);
        expect(finalSignerKeys(finalized, index).map(toHex).sort()).toEqual(expected.sort());
        const all = input.bip32Derivations.map((d) => toHex(d.pubkey));
        if (all.length > expected.length) expect(all.filter((k) => !expected.includes(k)).length).toBeGreaterThan(0); // a key that never signed exists
      });
    });
  }

  it('a signature that verifies against no key of the script names no key', () => {
    const w = fixturePsbts().find((f) => f.wallet === 'w_wsh2of3')!;
    const finalized = finalizePsbt(parsePsbt(w.stages[w.stages.length - 1]!.psbt)).psbt;
    const witness = finalized.inputs[0]!.finalScriptWitness!;
    const forged = Uint8Array.from(witness[1]!);
    forged[10] = forged[10]! ^ 0x01;
    const altered = { ...finalized, inputs: finalized.inputs.map((i, n) => (n === 0 ? { ...i, finalScriptWitness: [witness[0]!, forged, ...witness.slice(2)] } : i)) };
    expect(finalSignerKeys(altered, 0)).toHaveLength(1);
  });

  it('an input that is not finalized names no key', () => {
    const w = fixturePsbts().find((f) => f.wallet === 'w_wsh2of3')!;
    expect(finalSignerKeys(parsePsbt(w.stages[w.stages.length - 1]!.psbt), 0)).toEqual([]);
  });
});
