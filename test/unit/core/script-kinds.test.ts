/**
 * The script kind table and spend plans: every kind's descriptor plan agrees with the plan read
 * back from a derived output's scripts, with Core's signed sizes, and with the fixture wallets;
 * a hand-written plan with several paths and timelocks (what a miniscript analysis produces) is
 * read by size estimates, coin selection's sizes and PSBT timelocks.
 */
import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_TYPES, DescriptorDeriver, formatDescriptor, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import { emptyInput } from '../../../src/core/psbt/types.js';
import { SCRIPT_KINDS, kindOfExpressions, spendPlanOf, spendPlanOfKind } from '../../../src/core/script-kinds/index.js';
import { signaturesFor, spendableOutput } from '../../../src/core/script-kinds/output-plan.js';
import { parsePsbt } from '../../../src/core/psbt/codec.js';
import { finalizePsbt } from '../../../src/core/psbt/finalize.js';
import { minimumSignatureCount } from '../../../src/core/psbt/signatures.js';
import { fixturePsbts } from './psbt-support.js';
import { estimateVsize, inputVsize, inputWeight, isSegwitInput } from '../../../src/core/size.js';
import { isSatisfied, kOfN, keysOf, pathTimelocks, signaturesNeeded, signaturesToward, type OutputSpendPlan, type SpendPlan } from '../../../src/core/spend-plan.js';
import { parseTransaction, vsize } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

const regtest = NETWORKS.regtest;
const wallets = loadFixture<Record<string, any>>('wallets');
const psbts = loadFixture<Record<string, any>>('psbts');

// Three fixed compressed keys (the generator's multiples 1, 2, 3).
const KEYS = [
  '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
  '02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5',
  '02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9',
];

function descriptorText(type: (typeof DESCRIPTOR_TYPES)[number]): string {
  const kind = SCRIPT_KINDS[type];
  const args = kind.multisig ? ['2', ...KEYS].join(',') : KEYS[0]!;
  return kind.expressions.reduceRight((inner, name) => `${name}(${inner})`, args);
}

describe('the script kind table', () => {
  it('has one entry per descriptor type, found again from its expressions', () => {
    expect(Object.keys(SCRIPT_KINDS).sort()).toEqual([...DESCRIPTOR_TYPES].sort());
    for (const type of DESCRIPTOR_TYPES) expect(kindOfExpressions(SCRIPT_KINDS[type].expressions)?.type).toBe(type);
    expect(kindOfExpressions(['wsh', 'pkh'])).toBeUndefined();
  });

  it.each(DESCRIPTOR_TYPES)('%s: parses and prints through its entry, and its plan is the plan read back from a derived output', (type) => {
    const descriptor = parseDescriptor(descriptorText(type), regtest);
    expect(descriptor.type).toBe(type);
    expect(formatDescriptor(descriptor).split('#')[0]).toBe(descriptorText(type));
    const plan = spendPlanOf(descriptor);
    expect(plan).toBe(spendPlanOfKind(type, descriptor.threshold, descriptor.keys.length)); // shared: comparable by identity
    const output = new DescriptorDeriver(descriptor).derive(0);
    const input = { ...emptyInput(), bip32Derivations: output.keys.map((k) => ({ pubkey: k.publicKey, fingerprint: new Uint8Array(4), path: [] })) };
    if (output.redeemScript) input.redeemScript = output.redeemScript;
    if (output.witnessScript) input.witnessScript = output.witnessScript;
    const read = spendableOutput(input, { value: 10_000n, script: output.scriptPubKey })!;
    expect(read.plan.segwit).toBe(plan.segwit);
    expect(read.plan.keys.length).toBe(plan.keyCount);
    expect(read.plan.paths.map((p) => ({ signers: p.signers, size: p.size, scheme: p.scheme }))).toEqual(
      plan.paths.map((p) => ({ signers: p.signers, size: p.size, scheme: p.scheme })),
    );
  });

  it('gives Bitcoin Core`s per-input sizes from the plans', () => {
    const vsizeOf = (type: (typeof DESCRIPTOR_TYPES)[number], k = 1, n = 1) => inputVsize(spendPlanOfKind(type, k, n));
    expect([vsizeOf('pkh'), vsizeOf('wpkh'), vsizeOf('sh-wpkh'), vsizeOf('tr')]).toEqual([149, 68, 91, 58]);
    expect([vsizeOf('wsh-sortedmulti', 2, 3), vsizeOf('sh-wsh-multi', 2, 3), vsizeOf('sh-sortedmulti', 2, 3)]).toEqual([105, 140, 298]);
  });

  it('estimates every fixture wallet`s finalized PSBT from its descriptor`s plan, never below the signed size', () => {
    let checked = 0;
    for (const [name, entry] of Object.entries(psbts)) {
      if (name.startsWith('_')) continue;
      const plan = spendPlanOf(parseDescriptor(wallets[name].recv_descriptor, regtest));
      const tx = parseTransaction(entry.final.hex);
      const estimate = estimateVsize(tx.inputs.map(() => plan), tx.outputs.map((o) => o.script));
      expect(estimate).toBeGreaterThanOrEqual(vsize(tx));
      expect(estimate - vsize(tx)).toBeLessThanOrEqual(tx.inputs.length);
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
  });
});

/** wsh(or_d(multi(2,A,B),and_v(v:pk(C),older(144)))): 2-of-2 now, or C alone after 144 blocks. */
const decaying: SpendPlan = {
  segwit: true,
  keyCount: 3,
  paths: [
    { name: 'multi', signers: kOfN(2, 2), scheme: 'ecdsa', size: { scriptSig: 0, witness: [0, 72, 72, 110] } },
    { name: 'and_v(v:pk(C),older(144))', signers: { k: 1, of: [2] }, scheme: 'ecdsa', sequence: 144, size: { scriptSig: 0, witness: [72, 0, 110] } },
  ],
};

describe('a plan with several paths and timelocks', () => {
  it('is sized by its largest path', () => {
    const one = (path: number): SpendPlan => ({ ...decaying, paths: [decaying.paths[path]!] });
    expect(inputWeight(decaying)).toBe(Math.max(inputWeight(one(0)), inputWeight(one(1))));
    expect(inputWeight(decaying)).toBe(inputWeight(one(0)));
    expect(isSegwitInput(decaying)).toBe(true);
  });

  it('counts and checks signatures through nested thresholds', () => {
    const nested = { k: 2, of: [0, { k: 1, of: [1, 2] }, 3] };
    expect(keysOf(nested)).toEqual([0, 1, 2, 3]);
    expect(signaturesNeeded(nested)).toBe(2);
    expect(isSatisfied(nested, (k) => k === 1 || k === 2)).toBe(false);
    expect(isSatisfied(nested, (k) => k === 0 || k === 2)).toBe(true);
    expect(signaturesToward(nested, (k) => k !== 3)).toBe(3);
  });

  it('sets the nSequence and nLockTime a path needs, keeping the wallet`s own where the path needs none', () => {
    expect(pathTimelocks(decaying.paths[0]!, { sequence: 0xfffffffd, lockTime: 800 })).toEqual({ sequence: 0xfffffffd, lockTime: 800 });
    expect(pathTimelocks(decaying.paths[1]!, { sequence: 0xfffffffd, lockTime: 800 })).toEqual({ sequence: 144, lockTime: 800 });
    const after = (lockTime: number) => ({ ...decaying.paths[0]!, lockTime });
    expect(pathTimelocks(after(900), { sequence: 0xffffffff, lockTime: 800 })).toEqual({ sequence: 0xfffffffe, lockTime: 900 });
    expect(pathTimelocks(after(700), { sequence: 0xfffffffe, lockTime: 800 })).toEqual({ sequence: 0xfffffffe, lockTime: 800 });
    expect(pathTimelocks(after(1_700_000_000), { sequence: 0xfffffffd, lockTime: 800 })).toEqual({ sequence: 0xfffffffd, lockTime: 1_700_000_000 });
  });
});

describe('output plans the caller knows', () => {
  const key = (byte: number) => Uint8Array.from({ length: 32 }, () => byte);
  const leafHash = key(9);
  const known = (finalize: OutputSpendPlan['paths'][number]['finalize']): OutputSpendPlan => ({
    segwit: true,
    keyCount: 2,
    keys: [key(1), key(2)],
    paths: [{ name: 'and_v(v:pk(A),pk(B))', signers: kOfN(2, 2), scheme: 'schnorr', size: { scriptSig: 0, witness: [64, 64, 68, 65] }, tapLeafHash: leafHash, finalize }],
  });

  it('finds tapscript signatures by key and leaf among the input`s other fields', () => {
    const input = emptyInput();
    const sig = Uint8Array.from({ length: 64 }, () => 7);
    input.other.push({ key: Uint8Array.of(0x14, ...key(2), ...leafHash), value: sig });
    input.other.push({ key: Uint8Array.of(0x14, ...key(1), ...key(8)), value: sig }); // another leaf
    const plan = known(() => 'unused');
    const signatureOf = signaturesFor(input, plan, plan.paths[0]!);
    expect(signatureOf(1)).toEqual(sig);
    expect(signatureOf(0)).toBeUndefined();
  });

  it('are used instead of the scripts to finalize and count signatures', () => {
    const wallet = fixturePsbts().find((w) => w.wallet === 'w_wsh2of3')!;
    const psbt = parsePsbt(wallet.stages[wallet.stages.length - 1]!.psbt);
    const plans = psbt.inputs.map(() => known(() => 'the plan the caller knows is not satisfied'));
    const result = finalizePsbt(psbt, { outputPlans: plans });
    expect(result.complete).toBe(false);
    expect(result.pending.map((p) => p.reason)).toEqual(psbt.inputs.map(() => 'the plan the caller knows is not satisfied'));
    expect(minimumSignatureCount(psbt, 2)).toBe(2);
    expect(minimumSignatureCount(psbt, 2, plans)).toBe(0);
  });
});
