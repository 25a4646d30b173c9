/** Miniscript descriptors: their spend plans, and the final witness each path of an output builds. */
import { describe, expect, it } from 'vitest';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import {
  deriveMiniscriptOutput, isUnspendableKey, miniscriptOutputPlan, miniscriptSpendPlan, MiniscriptError, NUMS_H, parseMiniscriptDescriptor,
} from '../../../src/core/miniscript/index.js';
import { encodeExtendedPublicKey } from '../../../src/core/keys/extended-key.js';
import type { FinalScripts } from '../../../src/core/spend-plan.js';

const key = (i: number) => toHex(secp256k1.getPublicKey(fromHex(i.toString(16).padStart(64, '0')), true));
const [A, B, C, H] = [1, 2, 3, 4].map(key) as [string, string, string, string];
const sig = (i: number, length: number) => new Uint8Array(length).fill(i + 1);
const hexes = (f: FinalScripts | string) => (typeof f === 'string' ? f : f.witness.map(toHex));

describe('wsh inheritance', () => {
  const desc = parseMiniscriptDescriptor(`wsh(or_d(multi(2,${A},${B},${C}),and_v(v:pkh(${H}),older(52560))))`, NETWORKS.regtest);
  const output = deriveMiniscriptOutput(desc, 0);
  const ws = output.witnessScript!;

  it('plans the 2-of-3 first, then the heir with its nSequence', () => {
    const plan = miniscriptSpendPlan(desc);
    expect(plan.keyCount).toBe(4);
    expect(plan.paths.map((p) => p.name)).toEqual(['or_d(multi(2,@0,@1,@2),and_v(v:pkh(@3),older(52560)))#1', 'or_d(multi(2,@0,@1,@2),and_v(v:pkh(@3),older(52560)))#2']);
    expect(plan.paths.map((p) => ({ signers: p.signers, sequence: p.sequence, witness: p.size.witness, scheme: p.scheme }))).toEqual([
      { signers: { k: 2, of: [0, 1, 2] }, sequence: undefined, witness: [0, 72, 72, ws.length], scheme: 'ecdsa' },
      { signers: { k: 1, of: [3] }, sequence: 52560, witness: [72, 33, 0, 0, 0, ws.length], scheme: 'ecdsa' },
    ]);
  });

  it('each path finalizes from its own signatures only', () => {
    const plan = miniscriptOutputPlan(desc, output);
    const all = (i: number) => sig(i, 71);
    expect(hexes(plan.paths[0]!.finalize(all))).toEqual(['', toHex(all(0)), toHex(all(1)), toHex(ws)]);
    expect(hexes(plan.paths[1]!.finalize(all))).toEqual([toHex(all(3)), H, '', '', '', toHex(ws)]);
    expect(typeof plan.paths[0]!.finalize((i) => (i === 0 ? all(0) : undefined))).toBe('string');
  });

  it('sh(wsh()) carries the witness program in the scriptSig', () => {
    const nested = parseMiniscriptDescriptor(`sh(wsh(or_d(multi(2,${A},${B},${C}),and_v(v:pkh(${H}),older(52560)))))`, NETWORKS.regtest);
    const out = deriveMiniscriptOutput(nested, 0);
    expect(miniscriptSpendPlan(nested).paths[0]!.size.scriptSig).toBe(35);
    const final = miniscriptOutputPlan(nested, out).paths[0]!.finalize((i) => sig(i, 71)) as FinalScripts;
    expect(toHex(final.scriptSig)).toBe(`22${toHex(out.redeemScript!)}`);
  });
});

describe('tr with a NUMS internal key', () => {
  const desc = parseMiniscriptDescriptor(`tr(${NUMS_H},{multi_a(2,${A},${B},${C}),and_v(v:pk(${H}),older(52560))})`, NETWORKS.regtest);
  const output = deriveMiniscriptOutput(desc, 0);
  const t = output.taproot!;

  it('has no key path; each leaf path counts its script and control block', () => {
    const plan = miniscriptSpendPlan(desc);
    expect(plan.paths.map((p) => [p.signers, p.sequence, p.size.witness])).toEqual([
      [{ k: 2, of: [1, 2, 3] }, undefined, [64, 64, 0, t.leafScripts[0]!.length, 65]],
      [{ k: 1, of: [4] }, 52560, [64, t.leafScripts[1]!.length, 65]],
    ]);
  });

  it('multi_a puts the first key\'s signature on top', () => {
    const plan = miniscriptOutputPlan(desc, output);
    expect(plan.paths[0]!.tapLeafHash).toEqual(t.leafHashes[0]);
    const signed = (i: number) => (i === 1 || i === 2 ? sig(i, 64) : undefined);
    expect(hexes(plan.paths[0]!.finalize(signed))).toEqual(['', toHex(sig(2, 64)), toHex(sig(1, 64)), toHex(t.leafScripts[0]!), toHex(t.controlBlocks[0]!)]);
  });

  it('an extended key whose key is H (as BIP-388 wallet policies and Liana write it) has no key path either', () => {
    const hXpub = encodeExtendedPublicKey(
      { kind: 'tpub', depth: 0, parentFingerprint: 0, childNumber: 0, chainCode: new Uint8Array(32).fill(7), publicKey: fromHex(`02${NUMS_H}`) },
      NETWORKS.regtest,
    );
    const xpubA = encodeExtendedPublicKey(
      { kind: 'tpub', depth: 0, parentFingerprint: 0, childNumber: 0, chainCode: new Uint8Array(32).fill(8), publicKey: fromHex(A) },
      NETWORKS.regtest,
    );
    const paths = (internal: string) =>
      miniscriptSpendPlan(parseMiniscriptDescriptor(`tr(${internal}/<0;1>/*,and_v(v:pk(${H}),older(10)))`, NETWORKS.regtest)).paths.map((p) => p.name);
    expect(isUnspendableKey(`[00000000/86h]${hXpub}/<0;1>/*`)).toBe(true);
    expect(paths(hXpub)).not.toContain('key');
    expect(paths(hXpub)).toHaveLength(1);
    expect(paths(xpubA)[0]).toBe('key');
  });

  it('a single-key primary is the key path', () => {
    const single = parseMiniscriptDescriptor(`tr(${A},and_v(v:pk(${H}),older(10)))`, NETWORKS.regtest);
    const plan = miniscriptSpendPlan(single);
    expect(plan.paths[0]).toMatchObject({ name: 'key', signers: { k: 1, of: [0] }, size: { witness: [64] } });
    expect(plan.paths[1]).toMatchObject({ sequence: 10 });
  });
});

describe('refusals', () => {
  const code = (text: string) => {
    try {
      parseMiniscriptDescriptor(text, NETWORKS.regtest);
    } catch (e) {
      return (e as MiniscriptError).code;
    }
    return 'ok';
  };
  it.each([
    [`wsh(multi_a(2,${A},${B}))`, 'multi_a_in_wsh'],
    [`tr(${NUMS_H},multi(2,${A},${B}))`, 'multi_in_tapscript'],
    [`wsh(or_i(pk(${A}),older(10)))`, 'no_signature_needed'],
    [`wsh(and_v(v:pk(${A}),pk(${A})))`, 'duplicate_key'],
    [`pkh(${A})`, 'invalid_descriptor'],
    [`wsh(or_d(pk(${A}),and_v(v:pk([00000001/1h]${A}),older(10))))`, 'duplicate_key'],
    [`tr(${NUMS_H},{pk(${A})})`, 'invalid_descriptor'],
  ])('%s: %s', (text, expected) => expect(code(text)).toBe(expected));
});
