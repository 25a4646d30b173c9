import { describe, expect, it } from 'vitest';
import { parseBlock, parseTransaction, serializeTransaction, txid, type Transaction, type TxOutput } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';
import { parsePsbt } from '../../../src/core/psbt/codec.js';
import { spentOutput } from '../../../src/core/psbt/decode.js';
import { assertTransactionVerifies, verifyTransaction, VerifyError } from '../../../src/core/signing/verify.js';
import { fixturePsbts } from './psbt-support.js';

/** The final transaction of a fixture wallet and the outputs it spends (from Core's unsigned PSBT). */
function finalWithPrevouts(w: ReturnType<typeof fixturePsbts>[number]): { tx: Transaction; prevouts: TxOutput[] } {
  const psbt = parsePsbt(w.stages[0]!.psbt);
  return { tx: parseTransaction(w.final.hex), prevouts: psbt.tx.inputs.map((_, i) => spentOutput(psbt, i)!) };
}

const clone = (tx: Transaction): Transaction => parseTransaction(serializeTransaction(tx).slice());

const expectedTypes: Record<string, string> = {
  w_wpkh: 'wpkh',
  w_shwpkh: 'sh-wpkh',
  w_pkh: 'pkh',
  w_tr: 'tr',
  w_wsh2of3: 'wsh-multi',
  w_shwsh2of3: 'sh-wsh-multi',
  w_wsh2of2: 'wsh-multi',
};

describe('signature verification of the fixtures final transactions', () => {
  for (const w of fixturePsbts()) {
    describe(w.wallet, () => {
      it('verifies every input against its prevout', () => {
        const { tx, prevouts } = finalWithPrevouts(w);
        const result = verifyTransaction(tx, prevouts);
        expect(result.valid).toBe(true);
        for (const input of result.inputs) expect(input.type).toBe(expectedTypes[w.wallet]);
        expect(() => assertTransactionVerifies(tx, prevouts)).not.toThrow();
      });

      it('fails when any byte of any signature is altered', () => {
        const { tx, prevouts } = finalWithPrevouts(w);
        for (let i = 0; i < tx.inputs.length; i++) {
          // The signature is the first long witness item, or the scriptSig (signature first).
          const target = tx.inputs[i]!.witness.find((item) => item.length >= 64) ?? tx.inputs[i]!.scriptSig;
          for (const offset of [5, 20, target.length - 2]) {
            const copy = clone(tx);
            const t = copy.inputs[i]!.witness.find((item) => item.length >= 64) ?? copy.inputs[i]!.scriptSig;
            t[offset] = t[offset]! ^ 0x01;
            expect(verifyTransaction(copy, prevouts).inputs[i]!.valid).toBe(false);
          }
        }
      });

      it('fails when an output amount or script is altered', () => {
        const { tx, prevouts } = finalWithPrevouts(w);
        const amount = clone(tx);
        amount.outputs[0]!.value += 1n;
        expect(verifyTransaction(amount, prevouts).valid).toBe(false);
        const script = clone(tx);
        const outputScript = script.outputs[0]!.script;
        outputScript[outputScript.length - 1] = outputScript[outputScript.length - 1]! ^ 0x01;
        expect(verifyTransaction(script, prevouts).valid).toBe(false);
        expect(() => assertTransactionVerifies(script, prevouts)).toThrow(VerifyError);
      });

      it('fails when a spent output is altered (amount for segwit, script for all)', () => {
        const { tx, prevouts } = finalWithPrevouts(w);
        const otherScript = prevouts.map((p) => ({ ...p, script: Uint8Array.from(p.script) }));
        otherScript[0]!.script[5] = otherScript[0]!.script[5]! ^ 0x01;
        expect(verifyTransaction(tx, otherScript).inputs[0]!.valid).toBe(false);
        if (w.wallet !== 'w_pkh') {
          const otherAmount = prevouts.map((p) => ({ ...p, value: p.value - 1n }));
          expect(verifyTransaction(tx, otherAmount).inputs[0]!.valid).toBe(false);
        }
      });

      it('fails for the unsigned transaction', () => {
        const { tx, prevouts } = finalWithPrevouts(w);
        const unsigned = clone(tx);
        for (const input of unsigned.inputs) {
          input.scriptSig = new Uint8Array(0);
          input.witness = [];
        }
        const result = verifyTransaction(unsigned, prevouts);
        expect(result.valid).toBe(false);
        expect(result.inputs.every((i) => !i.valid && i.reason)).toBe(true);
      });
    });
  }
});

describe('every transaction Bitcoin Core mined or accepted in the fixtures', () => {
  it('verifies against the outputs it spends (all inputs are of supported types)', () => {
    const byId = new Map<string, Transaction>();
    const all: Transaction[] = [];
    for (const block of Object.values(loadFixture('blocks')) as { hex: string }[]) {
      for (const tx of parseBlock(block.hex).transactions) {
        byId.set(txid(tx), tx);
        all.push(tx);
      }
    }
    const timeline = loadFixture('timeline');
    for (const snapshot of timeline.snapshots) {
      for (const entry of snapshot.mempool) {
        const tx = parseTransaction(entry.hex);
        byId.set(txid(tx), tx);
        all.push(tx);
      }
    }
    let checked = 0;
    const types = new Set<string>();
    for (const tx of all) {
      if (tx.inputs.length === 1 && /^0{64}$/.test(tx.inputs[0]!.txid)) continue;
      const prevouts = tx.inputs.map((i) => byId.get(i.txid)?.outputs[i.vout]);
      expect(prevouts.every(Boolean)).toBe(true);
      const result = verifyTransaction(tx, prevouts as TxOutput[]);
      expect(result.inputs.filter((i) => !i.valid)).toEqual([]);
      result.inputs.forEach((i) => types.add(i.type!));
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
    expect([...types].sort()).toEqual(expect.arrayContaining(['pkh', 'sh-wpkh', 'sh-wsh-multi', 'tr', 'wpkh', 'wsh-multi']));
  });
});
