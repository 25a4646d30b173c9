/**
 * Miniscript wallets with a timelocked recovery path, end to end against a real Bitcoin Core, for
 * wsh and tr: created over HTTP from a `paths` policy, addresses equal to Core's `deriveaddresses`,
 * spending paths and coins' heights in the details, a primary-path PSBT signed by Core signer wallets
 * and broadcast through the service, a recovery-path PSBT refused before its lock and spent after it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { cosign, describeWithBitcoind, startChainWorld, stripChecksum, waitFor, type ChainWorld } from './chain-world.js';

const COSIGNERS = ['alice', 'bob', 'carol', 'heir'] as const;
type Cosigner = (typeof COSIGNERS)[number];
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

  /** A Core wallet holding the service's descriptors, with `who`'s private key in place of its public one. */
  async function signerOf(alias: string, details: { recv_descriptor: string; change_descriptor: string }, who: Cosigner): Promise<WalletRpc> {
    const { tpub, tprv } = account[who]!;
    const xpubOnly = (k: string) => k.replace(/^\[[^\]]+\]/, '');
    const descriptors = [details.recv_descriptor, details.change_descriptor].map((d) => stripChecksum(d).replaceAll(xpubOnly(tpub), xpubOnly(tprv)));
    return world.chain.coreWallet(`sign-${alias}-${who}`, descriptors, false);
  }

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

      // Exports: the multipath descriptor (Core reads it as the same wallet), a BIP388 policy, and 422 for formats that cannot hold it.
      const exported = await client.send('GET', `/wallets/${alias}/export?format=descriptor`);
      expect(exported.status, exported.text).toBe(200);
      const multipath = exported.text.trim();
      expect(await chain.rpc.call('deriveaddresses', [multipath, [0, 4]])).toEqual([core, await chain.rpc.call('deriveaddresses', [created.change_descriptor, [0, 4]])]);
      const bip388 = await client.send('GET', `/wallets/${alias}/export?format=bip388`);
      if (script === 'wsh') {
        expect(bip388.status, bip388.text).toBe(200);
        expect(JSON.parse(bip388.text)).toEqual({
          name: created.name,
          descriptor_template: `wsh(or_d(multi(2,@0/**,@1/**,@2/**),and_v(v:pkh(@3/**),older(${HEIR_BLOCKS}))))`,
          keys_info: (['alice', 'bob', 'carol', 'heir'] as const).map((n) => account[n]!.tpub),
        });
      } else {
        // The unspendable internal key is no xpub: BIP388 cannot name it.
        expect(bip388.status, bip388.text).toBe(422);
        expect(bip388.body.code).toBe('export_unsupported');
      }
      if (script === 'wsh') {
        // The same script nested in P2SH, given as a multipath descriptor without checksum.
        const nested = await client.importWallet(`${alias}-sh`, { descriptor: `sh(${stripChecksum(multipath)})` });
        expect(nested.address_type).toBe('p2sh-segwit');
        expect(nested.spending_paths).toHaveLength(2);
        expect(nested.address).toBe((await chain.rpc.call('deriveaddresses', [nested.recv_descriptor, [0, 0]]))[0]);
      }
      const coldcard = await client.send('GET', `/wallets/${alias}/export?format=coldcard`);
      expect(coldcard.status).toBe(422);
      expect(coldcard.body.code).toBe('export_unsupported');
    });
  }

  /**
   * Pays the wallet twice, spends one coin by the primary path (alice and bob sign), is refused the other on
   * the recovery path until its lock is reached, then the heir alone spends it. `lock` of the heir's path.
   */
  const cases = [
    ['wsh', 'relative', (_tip: number) => ({ after_blocks: HEIR_BLOCKS })],
    ['tr', 'relative', (_tip: number) => ({ after_blocks: HEIR_BLOCKS })],
    ['wsh', 'absolute', (tip: number) => ({ after_height: tip + HEIR_BLOCKS })],
    ['tr', 'absolute', (tip: number) => ({ after_height: tip + HEIR_BLOCKS })],
  ] as const;
  for (const [script, kind, lockOf] of cases) {
    it(`${script} with a ${kind} lock: primary path signed by two cosigners, recovery refused before its lock and spent by the heir after it`, async () => {
      const { client, chain } = world;
      const alias = `spend-${script}-${kind}`;
      const store = world.server.running.runtime.store;
      const startSeq = await store.events.lastSeq();
      const tip = await chain.height();
      const lock = lockOf(tip);
      const created = await client.importWallet(alias, { policy: policy(script, lock) });
      const payments = [{ address: await client.nextAddress(alias), sat: 40_000_000 }, { address: await client.nextAddress(alias), sat: 30_000_000 }];
      await chain.pay(payments);
      await chain.mine(1);
      const minedAt = await chain.height();
      await client.waitForBalance(alias, { total: 70_000_000, confirmed: 70_000_000 });
      const recoveryFrom = 'after_blocks' in lock ? minedAt + HEIR_BLOCKS : lock.after_height + 1;
      const details = await client.details(alias);
      for (const coin of details.utxo) expect(coin.spendable_from).toEqual({ primary: minedAt, 'recovery-1': recoveryFrom });

      // The primary path: two of the three cosigners.
      const [alice, bob, heir] = [await signerOf(alias, created, 'alice'), await signerOf(alias, created, 'bob'), await signerOf(alias, created, 'heir')];
      const first = await client.createPsbt(alias, {
        recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 10_000_000, unit: 'sat' }],
        fee_rate: '2',
        inputs: [{ txid: details.utxo[0].txid, vout: details.utxo[0].vout }],
      });
      expect(first.spending_path).toBe('primary');
      expect(first.sigs_required).toBe(2);
      expect(first.sigs_count).toBe(0);
      for (const [k, signer] of [alice, bob].entries()) {
        const put = await client.putPsbt(alias, first.tx.txid, await cosign(signer, await client.psbtBase64(alias, first.tx.txid)));
        expect(put.status, put.text).toBe(200);
        expect(put.body.result.sigs_count).toBe(k + 1);
      }
      await expectSameAsCore(alias, first);

      // The recovery path: refused while its lock is ahead.
      const second = { txid: details.utxo[1].txid, vout: details.utxo[1].vout };
      const refused = await client.send('POST', `/wallets/${alias}/psbt`, {
        recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 10_000_000, unit: 'sat' }],
        fee_rate: '2',
        spending_path: 'recovery-1',
      });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.code).toBe('timelock_not_met');
      expect(refused.body.message).toContain(`from height ${recoveryFrom}`);
      const refusedCoin = await client.send('POST', `/wallets/${alias}/psbt`, {
        recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 10_000_000, unit: 'sat' }],
        fee_rate: '2',
        spending_path: 'recovery-1',
        inputs: [second],
      });
      expect(refusedCoin.status, refusedCoin.text).toBe(422);
      expect(refusedCoin.body.code).toBe('timelock_not_met');

      // Mined up to the block before the one the path can spend in: the next block reaches the lock.
      await chain.mine(recoveryFrom - 1 - (await chain.height()));
      const height = await chain.height();
      await waitFor(async () => (await client.details(alias)).utxo.some((u: { txid: string; confirmations: number }) => u.txid === second.txid && u.confirmations === height - minedAt + 1), 'the service at the tip');
      const recovery = await client.createPsbt(alias, {
        recipients: [{ address: await chain.minerAddressOf('bech32m'), amount: 10_000_000, unit: 'sat' }],
        fee_rate: '2',
        spending_path: 'recovery-1',
        inputs: [second],
      });
      expect(recovery.spending_path).toBe('recovery-1');
      expect(recovery.sigs_required).toBe(1);
      // Each psbt.created event says the threshold of its PSBT's path: the recovery needs one signature, not the wallet's two.
      const createdEvents = (await store.events.listAfter(startSeq, undefined, 1000)).filter((e) => e.type === 'psbt.created' && e.walletAlias === alias);
      expect(createdEvents.map((e) => [e.data.txid, e.data.sigs_required])).toEqual([
        [first.tx.txid, 2],
        [recovery.tx.txid, 1],
      ]);
      if ('after_blocks' in lock) expect(recovery.tx.vin[0].sequence).toBe(HEIR_BLOCKS);
      else expect(recovery.tx.locktime).toBeGreaterThanOrEqual(lock.after_height);
      const put = await client.putPsbt(alias, recovery.tx.txid, await cosign(heir, await client.psbtBase64(alias, recovery.tx.txid)));
      expect(put.status, put.text).toBe(200);
      expect(put.body.result.sigs_count).toBe(1);
      await expectSameAsCore(alias, recovery);
    }, 120_000);
  }

  it('wsh: coins whose recovery opens soon are listed, and a refresh spends them back to the wallet by the primary path', async () => {
    const { client, chain } = world;
    const alias = 'refresh-wsh';
    const created = await client.importWallet(alias, { policy: policy('wsh', { after_blocks: HEIR_BLOCKS }) });
    const store = world.server.running.runtime.store;
    const startSeq = await store.events.lastSeq();
    await chain.pay([{ address: await client.nextAddress(alias), sat: 20_000_000 }, { address: await client.nextAddress(alias), sat: 15_000_000 }]);
    await chain.mine(1);
    const minedAt = await chain.height();
    await client.waitForBalance(alias, { total: 35_000_000, confirmed: 35_000_000 });
    const before = await client.details(alias);
    // The coins came within the warning window as they were confirmed: one wallet.timelock_expiring each.
    const expiringEvents = await waitFor(async () => {
      const found = (await store.events.listAfter(startSeq, undefined, 1000)).filter((e) => e.type === 'wallet.timelock_expiring' && e.walletAlias === alias);
      return found.length >= 2 && found;
    }, 'the timelock events');
    expect(expiringEvents.map((e) => e.data).sort((a, b) => String(a.txid).localeCompare(String(b.txid)) || Number(a.vout) - Number(b.vout))).toEqual(
      [...before.utxo]
        .sort((a: { txid: string; vout: number }, b: { txid: string; vout: number }) => a.txid.localeCompare(b.txid) || a.vout - b.vout)
        .map((u: { txid: string; vout: number }) => ({ txid: u.txid, vout: u.vout, spending_path: 'recovery-1', from_height: minedAt + HEIR_BLOCKS, blocks_left: HEIR_BLOCKS - 1 })),
    );
    expect(before.timelock_expiring.map((c: { from_height: number; spending_path: string }) => [c.spending_path, c.from_height])).toEqual([
      ['recovery-1', minedAt + HEIR_BLOCKS],
      ['recovery-1', minedAt + HEIR_BLOCKS],
    ]);
    // The wallet page shows each path, when each coin's recovery opens, and the refresh action.
    ensureWebAssets();
    const web = new WebClient(world.server.url);
    expect((await web.signIn('admin', world.server.adminPassword)).status).toBeLessThan(400);
    const page = await web.get(`/wallets/${alias}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-spending-paths');
    expect(page.text).toMatch(/data-path="recovery-1"[^]*12 blocks/);
    expect(page.text).toContain('data-timelock-notice');
    for (const coin of before.utxo) expect(page.text).toContain(`data-expiring="${coin.txid}:${coin.vout}"`);
    expect(page.text).toContain(`block ${minedAt + HEIR_BLOCKS}`);
    expect(page.text).toContain(`action="/wallets/${alias}/refresh"`);
    // The send page offers the paths; a recovery before its lock is refused naming the height.
    const send = await web.get(`/wallets/${alias}/send`);
    expect(send.text).toContain('data-spending-path');
    expect(send.text).toContain('value="recovery-1"');
    const early = await web.post(`/wallets/${alias}/send`, { address: await chain.minerAddressOf('bech32'), amount: '0.01', unit: 'btc', fee_rate: '2', rbf: 'on', spending_path: 'recovery-1', action: 'preview' });
    expect(early.text).toContain(`from height ${minedAt + HEIR_BLOCKS}`);
    const refusedRecipients = await client.send('POST', `/wallets/${alias}/psbt`, { refresh: true, recipients: [{ address: created.address, amount: 1000, unit: 'sat' }] });
    expect(refusedRecipients.status).toBe(400);

    const refresh = await client.createPsbt(alias, { refresh: true, fee_rate: '2' });
    expect(refresh.spending_path).toBe('primary');
    expect(refresh.tx.vin).toHaveLength(2);
    expect(refresh.tx.vout).toHaveLength(1);
    expect(refresh.amount).toEqual([]); // the only output is the wallet's own
    const [alice, carol] = [await signerOf(alias, created, 'alice'), await signerOf(alias, created, 'carol')];
    for (const signer of [alice, carol]) {
      const put = await client.putPsbt(alias, refresh.tx.txid, await cosign(signer, await client.psbtBase64(alias, refresh.tx.txid)));
      expect(put.status, put.text).toBe(200);
    }
    await expectSameAsCore(alias, refresh);
    const refreshedAt = await chain.height();
    const after = await waitFor(async () => {
      const d = await client.details(alias);
      return d.utxo.length === 1 && d.utxo[0].confirmations === 1 && d;
    }, 'the refreshed coin');
    expect(after.timelock_expiring).toEqual([{ txid: after.utxo[0].txid, vout: 0, spending_path: 'recovery-1', from_height: refreshedAt + HEIR_BLOCKS }]);
  }, 120_000);

  /** Core finalizes the service's PSBT to the transaction the service broadcasts, within the estimated size; then it is mined. */
  async function expectSameAsCore(alias: string, record: { tx: { txid: string }; tx_full_size: number }): Promise<void> {
    const { client, chain } = world;
    const core = await chain.rpc.call('finalizepsbt', [await client.psbtBase64(alias, record.tx.txid)]);
    expect(core.complete, JSON.stringify(await chain.rpc.call('analyzepsbt', [await client.psbtBase64(alias, record.tx.txid)])) + JSON.stringify((await chain.rpc.call('decodepsbt', [await client.psbtBase64(alias, record.tx.txid)])).inputs)).toBe(true);
    const accepted = (await chain.rpc.call('testmempoolaccept', [[core.hex]]))[0];
    expect(accepted.allowed, JSON.stringify(accepted)).toBe(true);
    const sent = await client.broadcast(alias, record.tx.txid);
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.hex ?? sent.body.result?.hex).toBe(core.hex);
    const vsize: number = accepted.vsize;
    expect(record.tx_full_size).toBeGreaterThanOrEqual(vsize);
    expect(record.tx_full_size - vsize).toBeLessThanOrEqual(4);
    await chain.mine(1);
  }
});
