import { describe, expect, it } from 'vitest';
import { decodePsbt } from '../../../src/core/psbt/decode.js';
import { parsePsbt, psbtToBase64 } from '../../../src/core/psbt/codec.js';
import { decodeTransaction } from '../../../src/core/decode.js';
import { NETWORKS } from '../../../src/core/network.js';
import { allFixturePsbts, corePsbtToOurs, coreTxToOurs, fixturePsbts } from './psbt-support.js';

const regtest = NETWORKS.regtest;

describe('PSBT decoding against Bitcoin Core decodepsbt', () => {
  for (const fixture of allFixturePsbts()) {
    it(`decodes ${fixture.name} as Core did, member for member`, () => {
      const ours: any = decodePsbt(parsePsbt(fixture.psbt), regtest);
      const core = corePsbtToOurs(fixture.decoded);
      for (const key of Object.keys(core)) expect({ key, value: ours[key] }).toEqual({ key, value: core[key] });
      expect(ours.fee).toBe(fixture.decoded.fee);
    });
  }

  it('rewrites every version 0 PSBT Core wrote byte for byte', () => {
    for (const fixture of allFixturePsbts()) {
      if (fixture.decoded.psbt_version !== 0) continue;
      expect(psbtToBase64(parsePsbt(fixture.psbt))).toBe(fixture.psbt);
    }
  });

  it('assembles the transaction of the version 2 PSBT from its BIP370 fields', () => {
    const v2 = allFixturePsbts().find((f) => f.name === '_misc psbt_v2')!;
    const decoded = decodePsbt(parsePsbt(v2.psbt), regtest);
    expect(decoded.tx.vin.map((i: any) => [i.txid, i.vout, i.sequence])).toEqual(
      v2.decoded.inputs.map((i: any) => [i.previous_txid, i.previous_vout, i.sequence]),
    );
    expect(decoded.tx.vout.map((o) => o.value)).toEqual(v2.decoded.outputs.map((o: any) => o.amount));
    expect(decoded.tx.version).toBe(v2.decoded.tx_version);
    expect(decoded.tx.locktime).toBe(v2.decoded.fallback_locktime);
  });
});

describe('transaction decoding against Bitcoin Core decoderawtransaction', () => {
  for (const w of fixturePsbts()) {
    it(`decodes the final transaction of ${w.wallet} as Core did`, () => {
      expect(decodeTransaction(w.final.hex, regtest)).toEqual(coreTxToOurs(w.final.decoded));
    });
  }
});
