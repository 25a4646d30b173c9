import { describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { parsePsbt, psbtToBase64 } from '../../../src/core/psbt/codec.js';
import { combinePsbts } from '../../../src/core/psbt/combine.js';
import { mergeCosignerPsbt } from '../../../src/core/psbt/merge.js';
import { decodePsbt, spentOutputs } from '../../../src/core/psbt/decode.js';
import { verifyTransaction } from '../../../src/core/signing/verify.js';
import { loadFixture } from '../../support/fixtures.js';
import { extractTransaction, extractVerifiedTransaction, finalizePsbt } from '../../../src/core/psbt/finalize.js';
import { assertPartialSignaturesValid, checkPartialSignatures, minimumSignatureCount } from '../../../src/core/psbt/signatures.js';
import { PsbtError } from '../../../src/core/psbt/types.js';
import { NETWORKS } from '../../../src/core/network.js';
import { serializeTransaction } from '../../../src/core/tx.js';
import { fixturePsbts } from './psbt-support.js';

const regtest = NETWORKS.regtest;
const thresholds: Record<string, number> = { w_wpkh: 1, w_shwpkh: 1, w_pkh: 1, w_tr: 1, w_wsh2of3: 2, w_shwsh2of3: 2, w_wsh2of2: 2 };

describe('finalizing, combining and extracting the fixtures PSBTs', () => {
  for (const w of fixturePsbts()) {
    describe(w.wallet, () => {
      const last = w.stages[w.stages.length - 1]!;

      it('finalizes the fully signed stage into exactly the transaction Core broadcast', () => {
        const result = finalizePsbt(parsePsbt(last.psbt));
        expect(result.pending).toEqual([]);
        expect(result.complete).toBe(true);
        expect(toHex(serializeTransaction(extractTransaction(result.psbt)))).toBe(w.final.hex);
        // A finalized PSBT survives a round trip through its serialisation.
        expect(psbtToBase64(parsePsbt(psbtToBase64(result.psbt)))).toBe(psbtToBase64(result.psbt));
      });

      it('refuses to finalize or extract the unsigned stage', () => {
        const result = finalizePsbt(parsePsbt(w.stages[0]!.psbt));
        expect(result.complete).toBe(false);
        expect(result.pending.length).toBe(result.psbt.inputs.length);
        expect(() => extractTransaction(result.psbt)).toThrow(PsbtError);
      });

      it('accepts every partial signature Core produced and counts signatures per input', () => {
        w.stages.forEach((stage, n) => {
          const psbt = parsePsbt(stage.psbt);
          expect(checkPartialSignatures(psbt).every((c) => c.valid)).toBe(true);
          expect(() => assertPartialSignaturesValid(psbt)).not.toThrow();
          expect(minimumSignatureCount(psbt, thresholds[w.wallet]!)).toBe(Math.min(n, thresholds[w.wallet]!));
        });
        const final = finalizePsbt(parsePsbt(last.psbt)).psbt;
        expect(minimumSignatureCount(final, thresholds[w.wallet]!)).toBe(thresholds[w.wallet]);
      });

      it('refuses a partial signature with a flipped bit', () => {
        const psbt = parsePsbt(last.psbt);
        const input = psbt.inputs[0]!;
        const sig = input.tapKeySig ?? input.partialSigs[0]!.signature;
        sig[10] = sig[10]! ^ 0x01;
        expect(checkPartialSignatures(psbt).some((c) => !c.valid)).toBe(true);
        expect(() => assertPartialSignaturesValid(psbt)).toThrow(PsbtError);
        // The finalizer never finalizes an input whose signature does not verify.
        const result = finalizePsbt(psbt);
        expect(result.complete).toBe(false);
        expect(result.pending[0]!.input).toBe(0);
      });
    });
  }

  for (const w of fixturePsbts().filter((x) => x.stages.length === 3)) {
    it(`combining the unsigned PSBT with each signer's copy gives what Core gave (${w.wallet})`, () => {
      const [unsigned, first, second] = w.stages.map((s) => parsePsbt(s.psbt)) as [any, any, any];
      // The second signer signed the first signer's copy; strip the first signature to get a lone copy.
      const secondAlone = parsePsbt(w.stages[2]!.psbt);
      const firstKeys = new Set(first.inputs[0].partialSigs.map((s: any) => toHex(s.pubkey)));
      secondAlone.inputs.forEach((input) => (input.partialSigs = input.partialSigs.filter((s) => !firstKeys.has(toHex(s.pubkey)))));
      const combined = combinePsbts(unsigned, first, secondAlone);
      expect(decodePsbt(combined, regtest)).toEqual(decodePsbt(second, regtest));
      expect(psbtToBase64(combined)).toBe(w.stages[2]!.psbt);
      const result = finalizePsbt(combined);
      expect(toHex(serializeTransaction(extractTransaction(result.psbt)))).toBe(w.final.hex);
    });
  }

  for (const w of fixturePsbts()) {
    it(`combining the unsigned PSBT with the fully signed copy gives the signed copy, byte for byte (${w.wallet})`, () => {
      const last = w.stages[w.stages.length - 1]!.psbt;
      expect(psbtToBase64(combinePsbts(parsePsbt(w.stages[0]!.psbt), parsePsbt(last)))).toBe(last);
      expect(psbtToBase64(combinePsbts(parsePsbt(last), parsePsbt(w.stages[0]!.psbt)))).toBe(last);
    });
  }

  it('refuses to combine PSBTs of different transactions with a typed error', () => {
    const [a, b] = fixturePsbts();
    expect(() => combinePsbts(parsePsbt(a!.stages[0]!.psbt), parsePsbt(b!.stages[0]!.psbt))).toThrow(
      expect.objectContaining({ code: 'different_transaction' }),
    );
  });
});

describe('merging a cosigner copy into the stored PSBT', () => {
  const w = fixturePsbts().find((x) => x.wallet === 'w_wsh2of3')!;

  it('adds valid signatures and reaches what Core gave', () => {
    const [unsigned, first, second] = w.stages.map((s) => parsePsbt(s.psbt)) as [any, any, any];
    const merged = mergeCosignerPsbt(mergeCosignerPsbt(unsigned, first), second);
    expect(psbtToBase64(merged)).toBe(w.stages[2]!.psbt);
  });

  it('refuses a bad signature, a copy of another transaction, and a forged finalized input', () => {
    const unsigned = parsePsbt(w.stages[0]!.psbt);
    const bad = parsePsbt(w.stages[1]!.psbt);
    const sig = bad.inputs[0]!.partialSigs[0]!.signature;
    sig[12] = sig[12]! ^ 0x01;
    expect(() => mergeCosignerPsbt(unsigned, bad)).toThrow(expect.objectContaining({ code: 'invalid_signature' }));
    const other = parsePsbt(fixturePsbts()[0]!.stages[0]!.psbt);
    expect(() => mergeCosignerPsbt(unsigned, other)).toThrow(expect.objectContaining({ code: 'different_transaction' }));
    // A copy claiming to be finalized with a witness that does not verify.
    const finalized = finalizePsbt(parsePsbt(w.stages[2]!.psbt)).psbt;
    const witness = finalized.inputs[0]!.finalScriptWitness!;
    witness[1]![20] = witness[1]![20]! ^ 0x01;
    expect(() => mergeCosignerPsbt(unsigned, finalized)).toThrow(expect.objectContaining({ code: 'invalid_signature' }));
  });
});

describe('finalizer rules', () => {
  it('does not finalize an input whose signature has another sighash type than PSBT_IN_SIGHASH_TYPE', () => {
    const w = fixturePsbts().find((x) => x.wallet === 'w_wpkh')!;
    const psbt = parsePsbt(w.stages[1]!.psbt);
    psbt.inputs[0]!.sighashType = 0x02;
    const result = finalizePsbt(psbt);
    expect(result.complete).toBe(false);
    expect(result.pending[0]!.reason).toMatch(/sighash type/);
    psbt.inputs[0]!.sighashType = 0x01;
    expect(finalizePsbt(psbt).complete).toBe(true);
  });

  it('lists the spent outputs for verifying the extracted transaction, or says which one is unknown', () => {
    const w = fixturePsbts().find((x) => x.wallet === 'w_wsh2of3')!;
    const psbt = finalizePsbt(parsePsbt(w.stages[2]!.psbt)).psbt;
    expect(verifyTransaction(extractTransaction(psbt), spentOutputs(psbt)).valid).toBe(true);
    const bare = parsePsbt(loadFixture('psbts')._misc.output_types.psbt);
    expect(() => spentOutputs(bare)).toThrow(expect.objectContaining({ code: 'missing_utxo' }));
  });
});

describe('extractVerifiedTransaction', () => {
  it('returns the broadcastable transaction, and refuses one with a forged final witness', () => {
    for (const w of fixturePsbts()) {
      const psbt = finalizePsbt(parsePsbt(w.stages[w.stages.length - 1]!.psbt)).psbt;
      expect(toHex(serializeTransaction(extractVerifiedTransaction(psbt)))).toBe(w.final.hex);
      const forged = parsePsbt(psbtToBase64(psbt));
      const input = forged.inputs[0]!;
      if (input.finalScriptWitness) {
        const item = input.finalScriptWitness[input.finalScriptWitness.length > 1 ? 1 : 0]!;
        item[8] = item[8]! ^ 1;
      }
      else input.finalScriptSig![8] = input.finalScriptSig![8]! ^ 1;
      expect(() => extractVerifiedTransaction(forged)).toThrow(expect.objectContaining({ code: 'invalid_signature' }));
    }
    expect(() => extractVerifiedTransaction(parsePsbt(fixturePsbts()[0]!.stages[0]!.psbt))).toThrow(expect.objectContaining({ code: 'incomplete' }));
  });
});
