/**
 * Writing PSBTs as version 2 (BIP370): every valid BIP370 and BIP174 vector written as version 2 and read
 * back is the same transaction (same txid) with the same fields, version 0 -> 2 -> 0 is lossless, and
 * @scure/btc-signer (an independent implementation) reads our version 2 and writes one we read alike.
 */
import { readFileSync } from 'node:fs';
import { Transaction as ScureTransaction } from '@scure/btc-signer';
import { base64 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { parsePsbt, psbtToBase64, psbtTxid, serializePsbtV2 } from '../../../src/core/psbt/index.js';

const vectors = (name: string) => JSON.parse(readFileSync(new URL(`../../vectors/${name}`, import.meta.url), 'utf8')) as { valid: { description: string; base64: string }[] };
const scureOptions = { allowUnknown: true, allowUnknownInputs: true, allowUnknownOutputs: true, disableScriptCheck: true, allowLegacyWitnessUtxo: true } as const;

describe('BIP370 vectors written as version 2', () => {
  for (const c of vectors('bip370-psbt-v2.json').valid) {
    it(c.description, () => {
      const original = parsePsbt(c.base64);
      const written = parsePsbt(serializePsbtV2(original));
      expect(written.version).toBe(2);
      expect(written.tx).toEqual(original.tx);
      expect(psbtTxid(written)).toBe(psbtTxid(original));
      expect(written.fallbackLocktime).toBe(original.fallbackLocktime);
      expect(written.txModifiable).toBe(original.txModifiable);
      expect(written.inputs.map((i) => [i.requiredHeightLocktime, i.requiredTimeLocktime])).toEqual(original.inputs.map((i) => [i.requiredHeightLocktime, i.requiredTimeLocktime]));
      // Every version 0 field is kept: both give the same version 0 PSBT.
      expect(psbtToBase64(written)).toBe(psbtToBase64(original));
    });
  }
});

describe('BIP174 vectors: version 0 -> 2 -> 0 is lossless', () => {
  for (const c of vectors('bip174-psbt.json').valid) {
    it(c.description, () => {
      const v0 = parsePsbt(c.base64);
      if (v0.version !== 0) return;
      const v2 = parsePsbt(serializePsbtV2(v0));
      expect(v2.version).toBe(2);
      expect(psbtTxid(v2)).toBe(psbtTxid(v0));
      expect(psbtToBase64(v2)).toBe(c.base64);
    });
  }
});

describe('@scure/btc-signer as an oracle', () => {
  const samples = vectors('bip370-psbt-v2.json').valid.filter((c) => {
    try {
      ScureTransaction.fromPSBT(base64.decode(c.base64), scureOptions);
      return true;
    } catch {
      return false;
    }
  });

  it('reads a fair share of the vectors', () => {
    expect(samples.length).toBeGreaterThan(3);
  });

  it('reads our version 2 as the same transaction', () => {
    for (const c of samples) {
      const ours = parsePsbt(c.base64);
      const scure = ScureTransaction.fromPSBT(serializePsbtV2(ours), scureOptions);
      expect(scure.id, c.description).toBe(psbtTxid(ours));
      expect(scure.inputsLength).toBe(ours.inputs.length);
      expect(scure.outputsLength).toBe(ours.outputs.length);
    }
  });

  it('writes version 2 from our version 0 that we read as the same transaction', () => {
    for (const c of samples) {
      const ours = parsePsbt(c.base64);
      const v0 = base64.decode(psbtToBase64(ours));
      const scureV2 = ScureTransaction.fromPSBT(v0, scureOptions).toPSBT(2);
      const back = parsePsbt(scureV2);
      expect(back.version).toBe(2);
      expect(psbtTxid(back), c.description).toBe(psbtTxid(ours));
    }
  });
});
