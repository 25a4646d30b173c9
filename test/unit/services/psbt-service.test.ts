/**
 * The PSBT use cases end to end below HTTP: fixture wallets (engine fed with the recorded timeline),
 * a real SQLite store, the JSON-RPC test node as chain backend. Each fixture wallet creates a PSBT,
 * every cosigner signs a copy with the fixture's private keys, and the broadcast transaction verifies
 * and pays exactly what was asked at no less than the asked fee rate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BitcoindChainSource } from '../../../src/chain/bitcoind/index.js';
import { decodeAddress } from '../../../src/core/address.js';
import { DescriptorDeriver, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import { decodePsbt, parsePsbt, serializePsbt, spentOutputs } from '../../../src/core/psbt/index.js';
import { verifyTransaction } from '../../../src/core/signing/verify.js';
import { parseTransaction, txid as transactionId, vsize } from '../../../src/core/tx.js';
import { coinHistory, type MempoolEntry } from '../../../src/engine/index.js';
import { applyAndPersist, timeline } from '../engine/support/replay.js';
import { PsbtChainReconciler } from '../../../src/services/psbts/chain-reconciler.js';
import { PsbtService } from '../../../src/services/psbts/service.js';
import type { Principal } from '../../../src/services/principal.js';
import { startRpcTestServer, type RpcTestServer } from '../../support/rpc-server.js';
import { openTestSqlite, type OpenedStore } from '../../support/stores.js';
import { FIXTURE_WALLET_IDS, FixtureWalletReader, LAST_SNAPSHOT, signAsCosigner, storeFixtureWallets, wallets } from './psbt-fixture-wallets.js';

const reconciler = new PsbtChainReconciler(Date.now);

const regtest = NETWORKS.regtest;
const alice: Principal = { userName: 'alice', isAdmin: false };
const bob: Principal = { userName: 'bob', isAdmin: false };

/** Addresses nobody in the test spends from: receive index 60 of w_tr (bech32m) and of w_shwpkh (p2sh). */
const external = ['w_tr', 'w_shwpkh'].map((name) => new DescriptorDeriver(parseDescriptor(wallets[name].recv_descriptor, regtest)).derive(60).address);

let node: RpcTestServer;
let opened: OpenedStore;
let reader: FixtureWalletReader;
let service: PsbtService;
let chain: BitcoindChainSource;
/** The node's mempool as the wallets see it: the snapshot's, then every broadcast. */
const mempool: MempoolEntry[] = timeline.snapshots[LAST_SNAPSHOT].mempool.map((m: any) => ({ tx: parseTransaction(m.hex), txid: m.txid, time: m.time }));

beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: LAST_SNAPSHOT });
  chain = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest' });
  opened = await openTestSqlite();
  reader = FixtureWalletReader.at(LAST_SNAPSHOT);
  await storeFixtureWallets(opened.store);
  service = new PsbtService({ store: opened.store, access: reader, coins: reader, chain: () => chain, maxFeeRate: 1000, maxPending: 100 });
}, 60_000);

afterAll(async () => {
  await chain?.close();
  await node?.close();
  await opened?.dispose();
});

describe('PSBT from creation to the chain, for every fixture wallet', () => {
  for (const name of FIXTURE_WALLET_IDS) {
    it(name, async () => {
      const wallet = wallets[name];
      const { txid, record } = await service.create(alice, name, {
        recipients: [
          { address: external[0], amount: '0.01234567', unit: 'btc', label: 'rent' },
          { address: external[1], amount: 2_000_000, unit: 'sat' },
        ],
        fee_rate: '5',
      });
      expect(record.tx.txid).toBe(txid);
      // The record agrees with the core library's own decoding of its base64.
      const decoded = decodePsbt(parsePsbt(record.base64), regtest);
      expect(record.tx).toEqual(decoded.tx);
      expect(record.inputs).toEqual(decoded.inputs);
      expect(record.outputs).toEqual(decoded.outputs);
      expect(record.amount).toEqual([0.01234567, 0.02]);
      expect(record.address).toEqual(external);
      expect(record.sigs_count).toBe(0);
      expect(record.tx.locktime).toBe(132);
      expect(record.tx.vin.every((i) => i.sequence === 0xfffffffd)).toBe(true);
      expect(Number(record.fee_rate)).toBeGreaterThanOrEqual(5);
      // Hardware wallets' needs: derivations on every input, previous transactions where not taproot.
      for (const input of decoded.inputs) {
        if (wallet.type === 'tr') expect(input.taproot_bip32_derivs?.length).toBe(1);
        else {
          expect(input.bip32_derivs?.length).toBe(wallet.keys.length);
          expect(input.non_witness_utxo).toBeDefined();
        }
      }
      expect(reader.labels).toContainEqual({ walletId: `id-${name}`, address: external[0], label: 'rent' });
      expect((await service.list(alice, name)).map((p) => p.txid)).toContain(txid);

      // One cosigner per update: sigs_count rises.
      let current = record;
      for (let k = 0; k < wallet.sigs_required; k++) {
        if (k < wallet.sigs_required - 1) {
          await expect(service.broadcast(alice, name, txid)).rejects.toMatchObject({ code: 'not_enough_signatures' });
        }
        current = await service.update(alice, name, txid, signAsCosigner(current.base64, name, k));
        expect(current.sigs_count).toBe(k + 1);
      }

      const sent = await service.broadcast(alice, name, txid);
      const received = node.broadcasts.at(-1)!;
      expect(received.outcome).toEqual({ txid: sent.txid });
      expect(received.hex).toBe(sent.hex);
      const tx = parseTransaction(received.hex);
      expect(transactionId(tx)).toBe(sent.txid);
      // Witness-only spends keep the PSBT's txid; legacy and P2SH ones change it with their scriptSig.
      if (['w_wpkh', 'w_tr', 'w_wsh2of3', 'w_wsh2of2'].includes(name)) expect(sent.txid).toBe(txid);
      const prevouts = spentOutputs(parsePsbt(current.base64)).map((o) => o!);
      expect(verifyTransaction(tx, prevouts)).toMatchObject({ valid: true });
      const paid = external.map((a) => tx.outputs.filter((o) => Buffer.from(o.script).equals(Buffer.from(decodeAddress(a, regtest)))).map((o) => o.value));
      expect(paid).toEqual([[1_234_567n], [2_000_000n]]);
      const fee = prevouts.reduce((n, o) => n + o.value, 0n) - tx.outputs.reduce((n, o) => n + o.value, 0n);
      expect(Number(fee) / vsize(tx)).toBeGreaterThanOrEqual(5);

      // It leaves the pending list once the wallet sees its transaction (what the sync does, with this state).
      mempool.push({ tx, txid: sent.txid, time: 1_800_000_000 });
      applyAndPersist(reader.state, reader.rows, { type: 'mempool', transactions: [...mempool] });
      expect((await service.list(alice, name)).map((p) => p.txid)).toContain(txid); // reads never settle
      const settled = await opened.store.transaction((repos) => reconciler.reconcile(repos, `id-${name}`, (t, v) => coinHistory(reader.state, name, t, v)));
      expect(settled).toEqual([{ walletId: `id-${name}`, txid, status: 'broadcast' }]);
      expect((await service.list(alice, name)).map((p) => p.txid)).not.toContain(txid);
      expect(await opened.store.psbts.reservations(`id-${name}`)).toEqual([]);
    });
  }
});

describe('refused creations change nothing', () => {
  const good = () => ({ address: external[0], amount: '0.001', label: 'never written' });
  const cases: [string, Principal, string, unknown, string, string][] = [
    ['insufficient funds', alice, 'w_wsh2of2', { recipients: [{ ...good(), amount: '20' }], fee_rate: 2 }, 'unprocessable', 'insufficient_funds'],
    ['below dust', alice, 'w_wpkh', { recipients: [{ ...good(), amount: 293, unit: 'sat' }], fee_rate: 2 }, 'unprocessable', 'amount_below_dust'],
    ['another network', alice, 'w_wpkh', { recipients: [{ ...good(), address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }], fee_rate: 2 }, 'unprocessable', 'wrong_network'],
    ['fee rate below relay minimum', alice, 'w_wpkh', { recipients: [good()], fee_rate: '0.05' }, 'unprocessable', 'fee_rate_too_low'],
    ['fee rate above the maximum', alice, 'w_wpkh', { recipients: [good()], fee_rate: '1000.001' }, 'unprocessable', 'fee_rate_too_high'],
    ['unknown wallet', alice, 'nope', { recipients: [good()], fee_rate: 2 }, 'not_found', 'wallet_not_found'],
    ["another user's wallet", bob, 'w_pkh', { recipients: [good()], fee_rate: 2 }, 'not_found', 'wallet_not_found'],
    ['read access only', bob, 'w_wpkh', { recipients: [good()], fee_rate: 2 }, 'not_found', 'wallet_not_found'],
    ['no recipients', alice, 'w_wpkh', { recipients: [], fee_rate: 2 }, 'invalid_input', 'invalid_request'],
    ['amount as float text with 9 decimals', alice, 'w_wpkh', { recipients: [{ ...good(), amount: '0.000000001' }] }, 'invalid_input', 'invalid_amount'],
    ['sat amount with decimals', alice, 'w_wpkh', { recipients: [{ ...good(), amount: '1000.5', unit: 'sat' }] }, 'invalid_input', 'invalid_amount'],
    ['unknown unit', alice, 'w_wpkh', { recipients: [{ ...good(), unit: 'mbtc' }] }, 'invalid_input', 'invalid_request'],
    ['malformed address', alice, 'w_wpkh', { recipients: [{ ...good(), address: 'bcrt1qnotanaddress' }] }, 'invalid_input', 'invalid_address'],
    ['subtract_from outside the recipients', alice, 'w_wpkh', { recipients: [good()], subtract: true, subtract_from: '1', fee_rate: 2 }, 'invalid_input', 'invalid_request'],
    ['rbf_tx_id not a txid', alice, 'w_wpkh', { recipients: [good()], rbf_tx_id: 'xyz', fee_rate: 2 }, 'invalid_input', 'invalid_request'],
    ['unknown transaction to replace', alice, 'w_wpkh', { recipients: [good()], rbf_tx_id: 'ab'.repeat(32), fee_rate: 2 }, 'not_found', 'transaction_not_found'],
    ['confirmed transaction to replace', alice, 'w_wpkh', { recipients: [good()], rbf_tx_id: '7dbf087c28c64c56ea64187fa7f83e4bea045dce2fe884b9a95a298a70f58575', fee_rate: 2 }, 'unprocessable', 'transaction_confirmed'],
    ['coin control with a coin not of the wallet', alice, 'w_wpkh', { recipients: [good()], inputs: [{ txid: 'cd'.repeat(32), vout: 0 }], fee_rate: 2 }, 'unprocessable', 'unknown_input'],
    ['body not an object', alice, 'w_wpkh', 'recipients', 'invalid_input', 'invalid_request'],
  ];
  for (const [what, who, alias, body, kind, code] of cases) {
    it(what, async () => {
      const labelsBefore = reader.labels.length;
      const before = await opened.store.psbts.reservations('id-w_wpkh');
      const pendingBefore = await opened.store.psbts.list(`id-${alias}`);
      await expect(service.create(who, alias, body)).rejects.toMatchObject({ kind, code });
      expect(reader.labels.length).toBe(labelsBefore);
      expect(await opened.store.psbts.reservations('id-w_wpkh')).toEqual(before);
      expect(await opened.store.psbts.list(`id-${alias}`)).toEqual(pendingBefore);
    });
  }
});

describe('amounts, fee subtraction, coin reservation', () => {
  it('btc and sat units give identical payments', async () => {
    const viaBtc = await service.create(alice, 'w_shwpkh', { recipients: [{ address: external[0], amount: '0.00123456' }], fee_rate: 3, inputs: undefined });
    await service.delete(alice, 'w_shwpkh', viaBtc.txid);
    const viaSat = await service.create(alice, 'w_shwpkh', { recipients: [{ address: external[0], amount: '123456', unit: 'sat' }], fee_rate: 3 });
    const viaNumber = await service.create(alice, 'w_shwpkh', { recipients: [{ address: external[0], amount: 0.00123456, unit: 'btc' }], fee_rate: 3 });
    for (const r of [viaBtc, viaSat, viaNumber]) {
      expect(r.record.amount).toEqual([0.00123456]);
      expect(r.record.tx.vout.filter((o) => o.scriptPubKey.addresses?.[0] === external[0]).map((o) => o.value)).toEqual([0.00123456]);
    }
    await service.delete(alice, 'w_shwpkh', viaSat.txid);
    await service.delete(alice, 'w_shwpkh', viaNumber.txid);
  });

  it('subtract takes the fee from the chosen recipient only', async () => {
    const { txid, record } = await service.create(alice, 'w_wsh2of3', {
      recipients: [
        { address: external[0], amount: '0.1' },
        { address: external[1], amount: '0.05' },
      ],
      fee_rate: '4',
      subtract: true,
      subtract_from: '1',
    });
    const fee = Math.round(record.fee * 1e8);
    expect(record.amount[0]).toBe(0.1);
    expect(Math.round(record.amount[1]! * 1e8)).toBe(5_000_000 - fee);
    expect(fee).toBeGreaterThanOrEqual(4 * record.tx_full_size);
    await service.delete(alice, 'w_wsh2of3', txid);
  });

  it('parallel creations never reserve the same coin; deleting frees them', async () => {
    const creations = await Promise.allSettled(
      Array.from({ length: 6 }, () => service.create(alice, 'w_wpkh', { recipients: [{ address: external[0], amount: '0.01' }], fee_rate: 2 })),
    );
    const made = creations.filter((c) => c.status === 'fulfilled').map((c) => (c as PromiseFulfilledResult<{ txid: string; record: any }>).value);
    for (const failed of creations.filter((c) => c.status === 'rejected')) expect((failed as PromiseRejectedResult).reason).toMatchObject({ code: 'insufficient_funds' });
    expect(made.length).toBeGreaterThan(1);
    const inputs = made.flatMap((m) => m.record.tx.vin.map((i: any) => `${i.txid}:${i.vout}`));
    expect(new Set(inputs).size).toBe(inputs.length);
    const reserved = await opened.store.psbts.reservations('id-w_wpkh');
    expect(reserved.map((r) => `${r.txid}:${r.vout}`).sort()).toEqual([...inputs].sort());
    expect(await opened.store.psbts.countPending('id-w_wpkh')).toBe(made.length);
    // Coin control on a reserved coin is refused.
    const [txid, vout] = inputs[0]!.split(':');
    await expect(
      service.create(alice, 'w_wpkh', { recipients: [{ address: external[0], amount: '0.001' }], fee_rate: 2, inputs: [{ txid, vout: Number(vout) }] }),
    ).rejects.toMatchObject({ code: 'input_reserved' });
    for (const m of made) await service.delete(alice, 'w_wpkh', m.txid);
    expect(await opened.store.psbts.reservations('id-w_wpkh')).toEqual([]);
    await expect(service.delete(alice, 'w_wpkh', made[0]!.txid)).rejects.toMatchObject({ code: 'psbt_not_found' });
  });

  it('frozen coins are never spent', async () => {
    const coins = (await reader.forSpending('id-w_tr')).utxos;
    for (const u of coins) reader.frozen.add(`${u.txid}:${u.vout}`);
    try {
      await expect(service.create(alice, 'w_tr', { recipients: [{ address: external[0], amount: '0.001' }], fee_rate: 2 })).rejects.toMatchObject({ code: 'insufficient_funds' });
    } finally {
      reader.frozen.clear();
    }
  });

  it('a coinbase coin is spent from 100 confirmations at the tip of the creation, not before', async () => {
    const spending = await reader.forSpending('id-w_tr');
    const [mined, ...others] = [...spending.utxos].filter((u) => u.blockHeight !== null).sort((a, b) => Number(b.valueSat - a.valueSat));
    const asCoinbase = (confirmations: number) => ({
      ...spending,
      // Every other coin frozen: only the coinbase can pay.
      utxos: [{ ...mined!, coinbase: true, blockHeight: spending.tipHeight - confirmations + 1 }, ...others.map((u) => ({ ...u, frozen: true }))],
    });
    const coinbaseService = (confirmations: number) =>
      new PsbtService({ store: opened.store, access: reader, coins: { forSpending: async () => asCoinbase(confirmations), addressLabelsWrite: reader.addressLabelsWrite.bind(reader) }, chain: () => chain, maxFeeRate: 1000, maxPending: 100 });
    const payment = { recipients: [{ address: external[0], amount: 10_000, unit: 'sat' as const }], fee_rate: 2 };
    await expect(coinbaseService(99).create(alice, 'w_tr', payment)).rejects.toMatchObject({ code: 'insufficient_funds' });
    const made = await coinbaseService(100).create(alice, 'w_tr', payment);
    expect(made.record.tx.vin).toMatchObject([{ txid: mined!.txid, vout: mined!.vout }]);
    await service.delete(alice, 'w_tr', made.txid);
  });

  it('a cosigner copy of another transaction is 409, a bad signature 422, read access may not sign', async () => {
    const a = await service.create(alice, 'w_wpkh', { recipients: [{ address: external[0], amount: '0.001' }], fee_rate: 2 });
    const b = await service.create(alice, 'w_wpkh', { recipients: [{ address: external[1], amount: '0.001' }], fee_rate: 2 });
    await expect(service.update(alice, 'w_wpkh', a.txid, signAsCosigner(b.record.base64, 'w_wpkh', 0))).rejects.toMatchObject({ kind: 'conflict', code: 'different_transaction' });
    const signed = parsePsbt(signAsCosigner(a.record.base64, 'w_wpkh', 0));
    const sig = signed.inputs[0]!.partialSigs[0]!;
    sig.signature = Uint8Array.from(sig.signature, (byte, i) => (i === 10 ? byte ^ 1 : byte));
    await expect(service.update(alice, 'w_wpkh', a.txid, Buffer.from(serializePsbt(signed)).toString('base64'))).rejects.toMatchObject({ kind: 'unprocessable', code: 'invalid_signature' });
    await expect(service.update(alice, 'w_wpkh', a.txid, 'not a psbt')).rejects.toMatchObject({ kind: 'invalid_input', code: 'invalid_psbt' });
    await expect(service.update(bob, 'w_wpkh', a.txid, a.record.base64)).rejects.toMatchObject({ code: 'wallet_not_found' });
    expect((await service.get(bob, 'w_wpkh', a.txid)).record.sigs_count).toBe(0);
    await service.delete(alice, 'w_wpkh', a.txid);
    await service.delete(alice, 'w_wpkh', b.txid);
  });
});
