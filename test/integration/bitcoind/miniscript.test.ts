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
  compilePolicy, deriveMiniscriptOutput, miniscriptOutputPlan, parseMiniscriptDescriptor, satisfy, sequenceMeets, lockTimeMeets, type SimplePolicy,
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
        const ours = Array.from({ length: 10 }, (_, i) => deriveMiniscriptOutput(parsed, i, branch).address);
        expect(ours).toEqual(core[branch]);
      }
    });
  }

  it.each(['wsh', 'tr'] as const)('%s: the satisfier builds the witness finalizepsbt builds from the same signatures', async (script) => {
    // A watch-only wallet holds the descriptor; alice and bob sign from their own wallets.
    const watched = parseMiniscriptDescriptor(compilePolicy(policy(script, xpub)).descriptor, NETWORKS.regtest);
    const name = `ms-${script}`;
    await node.rpc.call('createwallet', { wallet_name: name, disable_private_keys: true, blank: true });
    const wallet = node.rpc.wallet(name);
    const imported = await wallet.call('importdescriptors', [[{ desc: await withChecksum(compilePolicy(policy(script, xpub)).descriptor), timestamp: 'now', range: [0, 5] }]]);
    expect(imported.every((r: { success: boolean }) => r.success), JSON.stringify(imported)).toBe(true);

    const miner = node.rpc.wallet('alice');
    const minerAddress = await miner.call('getnewaddress');
    if ((await node.rpc.call('getblockcount')) < 101) await node.rpc.call('generatetoaddress', [101, minerAddress]);
    const output = deriveMiniscriptOutput(watched, 3, 0);
    await miner.call('sendtoaddress', [output.address, 1]);
    await node.rpc.call('generatetoaddress', [1, minerAddress]);

    const funded = await wallet.call('walletcreatefundedpsbt', [[], [{ [minerAddress]: 0.5 }], 0, { changeAddress: minerAddress }]);
    const bySigner = await Promise.all(['alice', 'bob'].map(async (n) => (await node.rpc.wallet(n).call('walletprocesspsbt', [funded.psbt, true, 'ALL', true, false])).psbt));
    const signed = await node.rpc.call('combinepsbt', [bySigner]);
    const decoded = await node.rpc.call('decodepsbt', [signed]);
    const input = decoded.inputs[0];
    const finalized = await node.rpc.call('finalizepsbt', [signed, true]);
    expect(finalized.complete).toBe(true);
    const coreWitness: string[] = (await node.rpc.call('decoderawtransaction', [finalized.hex])).vin[0].txinwitness;

    const signatures = new Map<string, string>();
    if (script === 'wsh') for (const [pubkey, sig] of Object.entries(input.partial_signatures as Record<string, string>)) signatures.set(pubkey, sig);
    else for (const s of input.taproot_script_path_sigs as { pubkey: string; sig: string }[]) signatures.set(s.pubkey, s.sig);
    // PSBT version 0 carries the transaction, version 2 the fields.
    const sequence: number = decoded.tx?.vin[0].sequence ?? input.sequence ?? 0xffffffff;
    const lockTime: number = decoded.tx?.locktime ?? decoded.fallback_locktime ?? 0;
    const leafIndex = 0;
    const root = watched.leaves[leafIndex]!.root;
    const keyBytes = (text: string) => output.keys[watched.keyTexts.indexOf(text)]!;
    const items = satisfy(root, {
      keyBytes,
      signatureOf: (text) => {
        const sig = signatures.get(toHex(keyBytes(text)));
        return sig === undefined ? undefined : Uint8Array.from(Buffer.from(sig, 'hex'));
      },
      checkOlder: (n) => sequenceMeets(sequence, n),
      checkAfter: (n) => lockTimeMeets(lockTime, n),
    });
    const tail = script === 'wsh' ? [output.witnessScript!] : [output.taproot!.leafScripts[leafIndex]!, output.taproot!.controlBlocks[leafIndex]!];
    expect([...items, ...tail].map(toHex)).toEqual(coreWitness);
    // The output's spend plan, primary path, from the same signatures by key index: the same witness.
    const primary = miniscriptOutputPlan(watched, output).paths[0]!;
    const final = primary.finalize((i) => {
      const sig = signatures.get(toHex(output.keys[i]!));
      return sig === undefined ? undefined : Uint8Array.from(Buffer.from(sig, 'hex'));
    });
    expect(typeof final === 'string' ? final : final.witness.map(toHex)).toEqual(coreWitness);
    expect(decoded.inputs[0].witness_utxo.amount).toBe(1);
  }, 60_000);
});
