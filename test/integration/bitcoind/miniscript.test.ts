/**
 * Miniscript descriptors against a real Bitcoin Core: the policies the service compiles (an heir
 * after a year in wsh, sh(wsh()) and tr with multi_a leaves), with cosigner xpubs `/<0;1>/*`,
 * derive the same addresses as Core's `deriveaddresses`; and the satisfier, given the signatures
 * Core's wallet made, builds the witness Core's `finalizepsbt` builds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import {
  compilePolicy, deriveMiniscriptOutput, deriveMiniscriptRange, miniscriptOutputPlan, miniscriptSpendPlan, parseMiniscriptDescriptor, satisfy, sequenceMeets, lockTimeMeets, type SimplePolicy,
} from '../../../src/core/miniscript/index.js';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { locateBitcoind, realNodeRequired } from '../../support/bitcoind-locate.js';

/** As chain-world's describeWithBitcoind, without loading the service (this file tests core/ only). */
function describeWithBitcoind(name: string, body: () => void): void {
  const located = locateBitcoind();
  if (!located.ok && realNodeRequired()) throw new Error(`CI run without a usable bitcoind: ${located.reason}`);
  describe.runIf(located.ok)(name, body);
}

const COSIGNERS = ['alice', 'bob', 'carol', 'heir'] as const;
const HEIR_LOCK = 52560;

describeWithBitcoind('miniscript descriptors against Bitcoin Core', () => {
  let node: BitcoindNode;
  /** `[fingerprint/84h/1h/0h]tpub...` per cosigner. */
  const xpub: Record<string, string> = {};

  const keyOf = (descriptors: { desc: string; internal: boolean }[]) => {
    const d = descriptors.find((x) => x.desc.startsWith('wpkh(') && !x.internal)!;
    return /^wpkh\((.+)\/0\/\*\)/.exec(d.desc)![1]!;
  };
  const withChecksum = async (desc: string) => `${desc}#${(await node.rpc.call('getdescriptorinfo', [desc])).checksum}`;
  const policy = (script: 'wsh' | 'tr', keys: Record<string, string>): SimplePolicy => ({
    script,
    paths: [
      { threshold: 2, keys: ['alice', 'bob', 'carol'].map((n) => `${keys[n]}/<0;1>/*`) },
      { threshold: 1, keys: [`${keys.heir}/<0;1>/*`], older: HEIR_LOCK },
    ],
  });

  beforeAll(async () => {
    node = await startBitcoind({ args: ['-fallbackfee=0.0001'] });
    for (const name of COSIGNERS) {
      await node.rpc.call('createwallet', [name]);
      const wallet = node.rpc.wallet(name);
      xpub[name] = keyOf((await wallet.call('listdescriptors', [false])).descriptors);
    }
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
  });

  it.each([
    ['3-of-3 decaying to 2-of-3', [{ threshold: 3, keys: ['alice', 'bob', 'carol'] }, { threshold: 2, keys: ['alice', 'bob', 'carol'], older: 4320 }]],
    ["2-of-3 becoming 2-of-4 with the heir's key", [{ threshold: 2, keys: ['alice', 'bob', 'carol'] }, { threshold: 2, keys: ['alice', 'bob', 'carol', 'heir'], older: 26280 }]],
    ['two recoveries, one by height', [{ threshold: 2, keys: ['alice', 'bob'] }, { threshold: 1, keys: ['carol'], older: 1000 }, { threshold: 1, keys: ['heir'], after: 900000 }]],
  ] as const)('wsh %s: Core accepts it and derives the same addresses', async (_, paths) => {
    const descriptor = compilePolicy({
      script: 'wsh',
      paths: paths.map((p) => ({ ...p, keys: p.keys.map((n) => `${xpub[n]}/<0;1>/*`) })),
    }).descriptor;
    const core: string[][] = await node.rpc.call('deriveaddresses', [await withChecksum(descriptor), [0, 4]]);
    const parsed = parseMiniscriptDescriptor(descriptor, NETWORKS.regtest);
    for (const branch of [0, 1]) expect(Array.from({ length: 5 }, (_, i) => deriveMiniscriptOutput(parsed, i, branch).address)).toEqual(core[branch]);
  });

  const cases: [string, (d: string) => string, 'wsh' | 'tr'][] = [
    ['wsh', (d) => d, 'wsh'],
    ['sh(wsh())', (d) => `sh(${d})`, 'wsh'],
    ['tr with a NUMS internal key and multi_a', (d) => d, 'tr'],
  ];
  for (const [label, wrap, script] of cases) {
    it(`${label}: receive and change addresses equal deriveaddresses`, async () => {
      const descriptor = wrap(compilePolicy(policy(script, xpub)).descriptor);
      const core: string[][] = await node.rpc.call('deriveaddresses', [await withChecksum(descriptor), [0, 9]]);
      const parsed = parseMiniscriptDescriptor(descriptor, NETWORKS.regtest);
      expect(parsed.multipath).toBe(2);
      for (const branch of [0, 1]) {
        expect(deriveMiniscriptRange(parsed, 0, 10, branch).map((o) => o.address)).toEqual(core[branch]);
        expect(deriveMiniscriptOutput(parsed, 7, branch).address).toBe(core[branch]![7]);
      }
    });
  }

  /**
   * Funds the policy's output at index 3 from a watch-only wallet, has `signers` sign from their own
   * wallets (input nSequence `sequence`, after `wait` more blocks), and returns Core's final witness
   * beside the one our satisfier and the output plan's path `path` build from the same signatures.
   */
  async function spend(label: string, desc: string, signers: string[], path: number, sequence?: number, wait = 0) {
    const watched = parseMiniscriptDescriptor(desc, NETWORKS.regtest);
    await node.rpc.call('createwallet', { wallet_name: label, disable_private_keys: true, blank: true });
    const wallet = node.rpc.wallet(label);
    const imported = await wallet.call('importdescriptors', [[{ desc: await withChecksum(desc), timestamp: 'now', range: [0, 5] }]]);
    expect(imported.every((r: { success: boolean }) => r.success), JSON.stringify(imported)).toBe(true);

    const miner = node.rpc.wallet('alice');
    const minerAddress = await miner.call('getnewaddress');
    if ((await node.rpc.call('getblockcount')) < 101) await node.rpc.call('generatetoaddress', [101, minerAddress]);
    const output = deriveMiniscriptOutput(watched, 3, 0);
    const txid = await miner.call('sendtoaddress', [output.address, 1]);
    const vout = (await node.rpc.call('getrawtransaction', [txid, true])).vout.findIndex((o: { scriptPubKey: { address: string } }) => o.scriptPubKey.address === output.address);
    await node.rpc.call('generatetoaddress', [1 + wait, minerAddress]);

    const inputs = [{ txid, vout, ...(sequence !== undefined && { sequence }) }];
    const funded = await wallet.call('walletcreatefundedpsbt', [inputs, [{ [minerAddress]: 0.5 }], 0, { changeAddress: minerAddress, add_inputs: false }]);
    const bySigner = await Promise.all(signers.map(async (n) => (await node.rpc.wallet(n).call('walletprocesspsbt', [funded.psbt, true, 'ALL', true, false])).psbt));
    const signed = bySigner.length > 1 ? await node.rpc.call('combinepsbt', [bySigner]) : bySigner[0];
    const decoded = await node.rpc.call('decodepsbt', [signed]);
    const input = decoded.inputs[0];
    const finalized = await node.rpc.call('finalizepsbt', [signed, true]);
    expect(finalized.complete).toBe(true);
    const coreInput = (await node.rpc.call('decoderawtransaction', [finalized.hex])).vin[0];
    const coreWitness: string[] = coreInput.txinwitness;
    // Core itself accepts the transaction it finalized (the lock is met).
    expect((await node.rpc.call('testmempoolaccept', [[finalized.hex]]))[0].allowed).toBe(true);

    const signatures = new Map<string, Uint8Array>();
    const add = (pubkey: string, sig: string) => signatures.set(pubkey, Uint8Array.from(Buffer.from(sig, 'hex')));
    for (const [pubkey, sig] of Object.entries((input.partial_signatures ?? {}) as Record<string, string>)) add(pubkey, sig);
    for (const s of (input.taproot_script_path_sigs ?? []) as { pubkey: string; sig: string }[]) add(s.pubkey, s.sig);
    // PSBT version 0 carries the transaction, version 2 the fields.
    const inputSequence: number = decoded.tx?.vin[0].sequence ?? input.sequence ?? 0xffffffff;
    const lockTime: number = decoded.tx?.locktime ?? decoded.fallback_locktime ?? 0;

    const plan = miniscriptOutputPlan(watched, output);
    const planned = plan.paths[path]!;
    const leaf = watched.kind === 'tr' ? output.taproot!.leafHashes.findIndex((h) => toHex(h) === toHex(planned.tapLeafHash!)) : 0;
    const keyBytes = (text: string) => output.keys[watched.keyTexts.indexOf(text)]!;
    const items = satisfy(watched.leaves[leaf]!.root, {
      keyBytes,
      signatureOf: (text) => signatures.get(toHex(keyBytes(text))),
      checkOlder: (n) => sequenceMeets(inputSequence, n),
      checkAfter: (n) => lockTimeMeets(lockTime, n),
    });
    const tail = output.taproot ? [output.taproot.leafScripts[leaf]!, output.taproot.controlBlocks[leaf]!] : [output.witnessScript!];
    const final = planned.finalize((i) => signatures.get(toHex(output.keys[i]!)));
    return {
      coreWitness,
      coreScriptSig: coreInput.scriptSig.hex as string,
      satisfied: [...items, ...tail].map(toHex),
      finalized: typeof final === 'string' ? final : final.witness.map(toHex),
      scriptSig: typeof final === 'string' ? final : toHex(final.scriptSig),
      planned,
    };
  }

  it.each([
    ['wsh', (d: string) => d, 'wsh'],
    ['sh(wsh())', (d: string) => `sh(${d})`, 'wsh'],
    ['tr', (d: string) => d, 'tr'],
  ] as const)('%s primary path: the satisfier and the plan build the input finalizepsbt builds', async (label, wrap, script) => {
    const r = await spend(`primary-${script}-${label.length}`, wrap(compilePolicy(policy(script, xpub)).descriptor), ['alice', 'bob'], 0);
    expect(r.satisfied).toEqual(r.coreWitness);
    expect(r.finalized).toEqual(r.coreWitness);
    expect(r.scriptSig).toBe(r.coreScriptSig);
  }, 60_000);

  it.each(['wsh', 'tr'] as const)('%s heir path after its lock: the same witness as finalizepsbt, with the nSequence the plan names', async (script) => {
    const heirPolicy: SimplePolicy = { ...policy(script, xpub), paths: [policy(script, xpub).paths[0]!, { threshold: 1, keys: [`${xpub.heir}/<0;1>/*`], older: 10 }] };
    const desc = compilePolicy(heirPolicy).descriptor;
    const plan = miniscriptSpendPlan(parseMiniscriptDescriptor(desc, NETWORKS.regtest));
    const heirPath = plan.paths.findIndex((p) => p.sequence === 10);
    const r = await spend(`heir-${script}`, desc, ['heir'], heirPath, 10, 10);
    expect(r.satisfied).toEqual(r.coreWitness);
    expect(r.finalized).toEqual(r.coreWitness);
    expect(r.coreWitness.length).toBe(r.planned.size.witness.length);
  }, 60_000);
});
