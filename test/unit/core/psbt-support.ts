/** Shared helpers of the PSBT tests: Bitcoin Core's decodings mapped to the service's member names. */
import { loadFixture } from '../../support/fixtures.js';

export interface FixtureStage {
  stage: string;
  psbt: string;
  decoded: any;
}

export interface FixturePsbt {
  wallet: string;
  stages: FixtureStage[];
  final: { hex: string; decoded: any };
  changePosition: number;
  feeBtc: number;
}

export const WALLETS = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;

export function fixturePsbts(): FixturePsbt[] {
  const psbts = loadFixture('psbts');
  return WALLETS.map((wallet) => ({
    wallet,
    stages: psbts[wallet].stages,
    final: psbts[wallet].final,
    changePosition: psbts[wallet].change_position,
    feeBtc: psbts[wallet].fee_btc,
  }));
}

/** Every PSBT of the fixtures with Core's decoding: all stages of all wallets and `_misc`. */
export function allFixturePsbts(): { name: string; psbt: string; decoded: any }[] {
  const psbts = loadFixture('psbts');
  const out: { name: string; psbt: string; decoded: any }[] = [];
  for (const w of fixturePsbts()) for (const s of w.stages) out.push({ name: `${w.wallet} ${s.stage}`, psbt: s.psbt, decoded: s.decoded });
  out.push({ name: '_misc output_types', ...pick(psbts._misc.output_types) });
  out.push({ name: '_misc psbt_v2', ...pick(psbts._misc.psbt_v2) });
  return out;
}

const pick = (x: any) => ({ psbt: x.psbt, decoded: x.decoded });

/** Core's scriptPubKey (`address`, `desc`) as the service prints it in decoded transactions (`addresses`, `reqSigs`). */
export function coreScriptPubKeyToOurs(spk: any): any {
  const { desc: _desc, address, ...rest } = spk;
  if (address === undefined) return rest;
  return { asm: rest.asm, hex: rest.hex, reqSigs: 1, type: rest.type, addresses: [address] };
}

export function coreTxToOurs(tx: any): any {
  return { ...tx, vout: tx.vout.map((o: any) => ({ ...o, scriptPubKey: coreScriptPubKeyToOurs(o.scriptPubKey) })) };
}

const withoutDesc = ({ desc: _desc, ...rest }: any) => rest;

/** Core's `decodepsbt` mapped to the service's conventions (see src/core/psbt/decode.ts). */
export function corePsbtToOurs(decoded: any): any {
  const out: any = { ...decoded };
  if (decoded.tx) out.tx = coreTxToOurs(decoded.tx);
  out.inputs = decoded.inputs.map((i: any) => {
    const input: any = { ...i };
    if (i.witness_utxo) input.witness_utxo = { ...i.witness_utxo, scriptPubKey: withoutDesc(i.witness_utxo.scriptPubKey) };
    if (i.non_witness_utxo) input.non_witness_utxo = coreTxToOurs(i.non_witness_utxo);
    return input;
  });
  out.outputs = decoded.outputs.map((o: any) => (o.script ? { ...o, script: withoutDesc(o.script) } : o));
  return out;
}
