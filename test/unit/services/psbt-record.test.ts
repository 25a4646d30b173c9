/** The PSBT record of the REST API, built from the fixtures PSBTs and checked against Core's own numbers. */
import { describe, expect, it } from 'vitest';
import { parsePsbt, finalizePsbt, PsbtError } from '../../../src/core/psbt/index.js';
import { formatFeeRate, psbtRecord } from '../../../src/services/psbts/record.js';
import { NETWORKS } from '../../../src/core/network.js';
import { loadFixture } from '../../support/fixtures.js';
import { corePsbtToOurs, fixturePsbts } from '../core/psbt-support.js';

const regtest = NETWORKS.regtest;
const wallets = loadFixture('wallets');
const psbts = loadFixture('psbts');

describe('PSBT record', () => {
  for (const w of fixturePsbts()) {
    it(`${w.wallet}: every stage, with Core's fee, the recipients only and the signature count`, () => {
      const threshold = wallets[w.wallet].sigs_required;
      w.stages.forEach((stage, n) => {
        const size: number = psbts[w.wallet].stages[0].analyzed.estimated_vsize;
        const record = psbtRecord(parsePsbt(stage.psbt), { network: regtest, changeOutputs: [w.changePosition], fullSizeVbytes: size, threshold, time: 1732240000.25 });
        const core = corePsbtToOurs(stage.decoded);
        expect(record.tx).toEqual(core.tx);
        expect(record.inputs).toEqual(core.inputs);
        expect(record.outputs).toEqual(core.outputs);
        expect(record.unknown).toEqual({});
        expect(record.fee).toBe(w.feeBtc);
        expect(record.base64).toBe(stage.psbt);
        expect(record.tx_full_size).toBe(size);
        expect(record.time).toBe(1732240000.25);
        expect(record.sigs_count).toBe(Math.min(n, threshold));
        // Core funded at 5 sat/vB for its own size estimate.
        expect(record.fee_rate).toBe(formatFeeRate(BigInt(Math.round(w.feeBtc * 1e8)), size));
        expect(Number(record.fee_rate)).toBeCloseTo(5, 0);
        const recipients = core.tx.vout.filter((_: any, i: number) => i !== w.changePosition);
        expect(record.address).toEqual(recipients.map((o: any) => o.scriptPubKey.addresses[0]));
        expect(record.amount).toEqual(recipients.map((o: any) => o.value));
        expect(Object.keys(record)).toEqual(['tx', 'unknown', 'inputs', 'outputs', 'fee', 'fee_rate', 'tx_full_size', 'base64', 'amount', 'address', 'time', 'sigs_count']);
      });
      const final = finalizePsbt(parsePsbt(w.stages[w.stages.length - 1]!.psbt)).psbt;
      expect(psbtRecord(final, { network: regtest, changeOutputs: [], fullSizeVbytes: 100, threshold, time: 0 }).sigs_count).toBe(threshold);
    });
  }

  it('formats the fee rate with two decimals, rounding half up, from exact integers', () => {
    expect(formatFeeRate(1160n, 232)).toBe('5.00');
    expect(formatFeeRate(1000n, 3)).toBe('333.33');
    expect(formatFeeRate(2000n, 3)).toBe('666.67');
    expect(formatFeeRate(1n, 200)).toBe('0.01');
    expect(formatFeeRate(1n, 201)).toBe('0.00');
    expect(() => formatFeeRate(1n, 0)).toThrow(PsbtError);
  });

  it('refuses a change index outside the outputs and a PSBT whose spent outputs are unknown', () => {
    const w = fixturePsbts()[0]!;
    const psbt = parsePsbt(w.stages[0]!.psbt);
    const options = { network: regtest, changeOutputs: [9], fullSizeVbytes: 100, threshold: 1, time: 0 };
    expect(() => psbtRecord(psbt, options)).toThrow(expect.objectContaining({ code: 'invalid_change_output' }));
    const bare = parsePsbt(psbts._misc.output_types.psbt);
    expect(() => psbtRecord(bare, { ...options, changeOutputs: [] })).toThrow(expect.objectContaining({ code: 'missing_utxo' }));
  });
});
