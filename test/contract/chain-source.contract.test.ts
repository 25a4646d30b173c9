/**
 * The chain-source contract: one scripted scenario on a real Bitcoin Core, watched by two service instances
 * through their HTTP API, one following the node over JSON-RPC (the reference), the other through the chain
 * source under test. After every step both instances must agree with Core's own watch-only wallets (each coin,
 * with its confirmations) and then show IDENTICAL wallets: balances, coins, transactions with confirmations and
 * block hashes, receive and change addresses. Run twice: against Bitcoin Core's source again (the harness
 * itself), and against the Electrum source over a real Fulcrum indexing the same node.
 *
 * Steps: payments (confirmed and unconfirmed, and to a wallet not yet created), spends (PSBTs of a 2-of-3
 * wsh-sortedmulti, a wpkh and a tr wallet signed by Core cosigners and broadcast through the instance under
 * test; a spend outside the service), a BIP125 replacement, reorgs (a payment dropped back to the mempool,
 * re-mined on another branch, then the chain switching back and forth), a payment evicted from the mempool by
 * a double spend, and a wallet created with a birthday in the past.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WalletRpc } from '../support/bitcoind-rpc.js';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../support/fulcrum.js';
import { describeWithFulcrum } from '../support/fulcrum-locate.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Chain, Client, btc, cosign, describeWithBitcoind, fixtureWallets, sats, serviceEnv, stripChecksum } from '../integration/bitcoind/chain-world.js';

/** The wallets the scenario follows: a 2-of-3, a single key, a taproot one, and one created late with a past birthday. */
const MULTISIG = 'w_wsh2of3';
const SINGLE = 'w_wpkh';
const TAPROOT = 'w_tr';
const LATE = 'w_shwpkh';
const EARLY_WALLETS = [MULTISIG, SINGLE, TAPROOT];

/** How long one step may take to show on both instances, and how long a test (several steps) may take. */
const SETTLE_MS = 30_000;
const STEP_TEST_MS = 240_000;

interface Instance {
  name: string;
  server: TestServer;
  client: Client;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const byKey = <T>(key: (item: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

const VARIANTS = [
  { source: 'bitcoind', title: 'Bitcoin Core again (the harness)', describe: describeWithBitcoind },
  { source: 'electrum', title: 'an Electrum server (Fulcrum) over the same node', describe: describeWithFulcrum },
] as const;

for (const variant of VARIANTS) {
  variant.describe(`chain-source contract: Bitcoin Core and ${variant.title} show the same wallets`, () => {
    let chain: Chain;
    let fulcrum: FulcrumServer | undefined;
    let reference: Instance;
    let subject: Instance;
    const instances: Instance[] = [];
    const watchers = new Map<string, WalletRpc>();
    const signers = new Map<string, WalletRpc[]>();
    /** Wallets created on both instances so far. */
    const created: string[] = [];
    /** The height before the first payment: the late wallet's birthday. */
    let heightBeforePayments = 0;

    async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
      const server = await startTestServer({ env: { ...env, SERVICE_LOG_LEVEL: 'warn' } });
      const instance = { name, server, client: await Client.forAdmin(server) };
      instances.push(instance);
      return instance;
    }

    beforeAll(async () => {
      chain = await Chain.start({ args: FULCRUM_NODE_ARGS });
      heightBeforePayments = await chain.height();
      for (const id of [...EARLY_WALLETS, LATE]) {
        const wallet = fixtureWallets[id]!;
        watchers.set(id, await chain.watcher(id, wallet));
        const keys = wallet.keys.slice(-wallet.sigs_required);
        signers.set(id, await Promise.all(keys.map((key) => chain.signer(`${id}-${key.key}`, wallet, key))));
      }
      reference = await startInstance('bitcoind (reference)', serviceEnv(chain.node));
      if (variant.source === 'electrum') {
        fulcrum = await startFulcrum(chain.node);
        subject = await startInstance('electrum', { SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: fulcrum.url, SERVICE_SYNC_INTERVAL: '0.2' });
      } else {
        subject = await startInstance('bitcoind (second)', serviceEnv(chain.node));
      }
      for (const id of EARLY_WALLETS) await createOnBoth(id, heightBeforePayments);
    }, 180_000);

    afterAll(async () => {
      for (const instance of instances) await instance.server.dispose();
      await fulcrum?.stop();
      await chain?.stop();
    });

    async function createOnBoth(id: string, birthday: number): Promise<void> {
      const wallet = fixtureWallets[id]!;
      const shown = [];
      for (const { client } of [reference, subject]) {
        shown.push(await client.importWallet(id, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday }));
      }
      expect(shown[1].recv_descriptor).toBe(shown[0].recv_descriptor);
      created.push(id);
    }

    /** The next receive address of a wallet, revealed on both instances (which must agree on it). */
    async function nextAddress(id: string): Promise<string> {
      const [a, b] = [await reference.client.nextAddress(id), await subject.client.nextAddress(id)];
      expect(b, `${id}: the next receive address on ${subject.name}`).toBe(a);
      return a;
    }

    /** Core's watch-only view: every coin as `txid:vout amount confirmations`, sorted. */
    async function coreCoins(id: string): Promise<string[]> {
      const unspent: any[] = await watchers.get(id)!.call('listunspent', [0, 9_999_999, [], true]);
      return unspent.map((u) => `${u.txid}:${u.vout} ${sats(u.amount)} ${u.confirmations}`).sort();
    }

    async function serviceCoins(instance: Instance, id: string): Promise<string[]> {
      const details = await instance.client.details(id);
      return details.utxo.map((u: any) => `${u.txid}:${u.vout} ${u.amount_sat} ${u.confirmations}`).sort();
    }

    /** What the two instances must show alike: details (without what only one instance did), coins, transactions, addresses. */
    async function snapshot(instance: Instance, id: string): Promise<Record<string, unknown>> {
      const { scan: _scan, pending_psbts: _pending, utxo, txlist, ...details } = await instance.client.details(id);
      const addresses = async (branch: string) => (await instance.client.ok('GET', `/wallets/${id}/addresses?branch=${branch}&from=0&count=30`));
      return {
        ...details,
        // Reservations belong to the instance that made the PSBT.
        utxo: utxo.map(({ reserved_by: _reserved, ...coin }: any) => coin).sort(byKey((c: any) => `${c.txid}:${c.vout}`)),
        // A mempool transaction's time is when that instance first saw it.
        txlist: txlist.map(({ time, ...t }: any) => (t.confirmations === 0 ? t : { ...t, time })).sort(byKey((t: any) => t.txid)),
        receive_addresses: await addresses('receive'),
        change_addresses: await addresses('change'),
      };
    }

    /**
     * Waits until each instance shows every created wallet's coins as Core's watch-only wallets do (so both
     * follow the node's tip and mempool), then until the two show the same wallets; fails with the difference.
     */
    async function settle(step: string): Promise<void> {
      const deadline = Date.now() + SETTLE_MS;
      for (const instance of [reference, subject]) {
        for (const id of created) {
          for (;;) {
            const core = await coreCoins(id);
            let shown: string[] | string;
            try {
              shown = await serviceCoins(instance, id);
            } catch (error) {
              shown = (error as Error).message;
            }
            if (JSON.stringify(shown) === JSON.stringify(core)) break;
            if (Date.now() > deadline) expect(shown, `${step}: ${id}'s coins on ${instance.name}, as Core's watch-only wallet has them${logTail(instance)}`).toEqual(core);
            await sleep(200);
          }
        }
      }
      for (const id of created) {
        for (;;) {
          const [a, b] = [await snapshot(reference, id), await snapshot(subject, id)];
          if (JSON.stringify(a) === JSON.stringify(b)) break;
          if (Date.now() > deadline) expect(b, `${step}: ${id} on ${subject.name}, as ${reference.name} shows it${logTail(subject)}`).toEqual(a);
          await sleep(200);
        }
      }
    }

    /** The instance's last warnings, for a failure message. */
    function logTail(instance: Instance): string {
      const lines = instance.server.logs.slice(-5).map((line) => line.trim().slice(0, 400));
      return lines.length === 0 ? '' : `; its last log lines:\n${lines.join('\n')}`;
    }

    /** A PSBT of the wallet made, signed by its Core cosigners and broadcast through `instance`; returns the network txid. */
    async function spend(instance: Instance, id: string, to: string, sat: number, extra: Record<string, unknown> = {}): Promise<string> {
      const { client } = instance;
      const record = await client.createPsbt(id, { recipients: [{ address: to, amount: sat, unit: 'sat' }], fee_rate: '3', ...extra });
      const unsigned = await client.psbtBase64(id, record.tx.txid);
      for (const signer of signers.get(id)!) {
        const put = await client.putPsbt(id, record.tx.txid, await cosign(signer, unsigned));
        expect(put.status, `${id}: PUT of a signature on ${instance.name}: ${put.text}`).toBe(200);
      }
      const sent = await client.broadcast(id, record.tx.txid);
      expect(sent.status, `${id}: broadcast through ${instance.name}: ${sent.text}`).toBe(200);
      expect(await chain.inMempool(sent.body.txid), `${id}: ${sent.body.txid} in Core's mempool`).toBe(true);
      return sent.body.txid;
    }

    it('payments: confirmed and unconfirmed, to every wallet and to one not created yet', async () => {
      const late = fixtureWallets[LATE]!;
      const lateAddresses: string[] = await chain.rpc.call('deriveaddresses', [await descriptorWithChecksum(late.recv_descriptor), [0, 1]]);
      const payments = [];
      for (const [i, id] of EARLY_WALLETS.entries()) payments.push({ address: await nextAddress(id), sat: 40_000_000 + i * 1_000_000 });
      payments.push({ address: lateAddresses[0]!, sat: 25_000_000 });
      await chain.pay(payments);
      await chain.mine(1);
      await settle('one block of payments');
      await chain.pay([
        { address: await nextAddress(MULTISIG), sat: 12_345_678 },
        { address: await nextAddress(SINGLE), sat: 7_654_321 },
        { address: lateAddresses[1]!, sat: 5_000_000 },
      ]);
      await settle('a payment in the mempool');
    }, STEP_TEST_MS);

    it('spends: PSBTs of the 2-of-3, wpkh and tr wallets broadcast through the instance under test, and a spend outside the service', async () => {
      await spend(subject, MULTISIG, await chain.minerAddressOf('bech32'), 15_000_000);
      await spend(subject, SINGLE, await chain.minerAddressOf('bech32m'), 10_000_000);
      await spend(subject, TAPROOT, await chain.minerAddressOf('legacy'), 5_000_000);
      // The late wallet's first coin spent by its own cosigner (change to its change branch), before the service knows it.
      const late = fixtureWallets[LATE]!;
      const [change] = await chain.rpc.call<string[]>('deriveaddresses', [await descriptorWithChecksum(late.change_descriptor), [0, 0]]);
      const sent = await signers.get(LATE)![0]!.call('send', { outputs: [{ [await chain.minerAddressOf('bech32')]: btc(8_000_000) }], fee_rate: 2, options: { change_address: change } });
      expect(sent.complete).toBe(true);
      await settle('spends in the mempool');
      await chain.mine(1);
      await settle('spends mined');
    }, STEP_TEST_MS);

    it('an RBF replacement of a spend evicts the original on both instances', async () => {
      const recipient = await chain.minerAddressOf('bech32');
      const original = await spend(subject, MULTISIG, recipient, 6_000_000, { fee_rate: '2', rbf: true });
      await settle('the original in the mempool');
      const replacement = await spend(subject, MULTISIG, recipient, 6_000_000, { fee_rate: '10', rbf: true, rbf_tx_id: original });
      expect(await chain.inMempool(original), 'the original left Core\'s mempool').toBe(false);
      await settle(`the replacement ${replacement} in the mempool`);
      await chain.mine(1);
      await settle('the replacement mined');
    }, STEP_TEST_MS);

    it('reorgs: a payment dropped back to the mempool, re-mined on another branch, and the chain switching back and forth', async () => {
      const payment = await chain.pay([
        { address: await nextAddress(SINGLE), sat: 3_000_000 },
        { address: await nextAddress(TAPROOT), sat: 4_000_000 },
      ]);
      const [first] = await chain.mine(1);
      await settle('the payment mined');
      await chain.rpc.call('invalidateblock', [first]);
      expect(await chain.inMempool(payment), 'the payment back in Core\'s mempool').toBe(true);
      await settle('its block disconnected');
      const [second] = await chain.mine(2, await chain.minerAddressOf('bech32'));
      expect(await chain.inMempool(payment), 'the payment re-mined').toBe(false);
      await settle('re-mined on a longer branch');
      // Back to the first, shorter branch: the tip's height goes down.
      await chain.rpc.call('reconsiderblock', [first]);
      await chain.rpc.call('invalidateblock', [second]);
      expect(await chain.rpc.call('getbestblockhash')).toBe(first);
      await settle('back on the first branch, one block lower');
      await chain.rpc.call('reconsiderblock', [second]);
      await chain.mine(1);
      await settle('the longer branch again');
    }, STEP_TEST_MS);

    it('mempool eviction: a payment double-spent by a conflicting transaction disappears', async () => {
      const [coin] = (await chain.miner.call<any[]>('listunspent', [105])).sort((a, b) => b.amount - a.amount);
      const total = sats(coin.amount);
      const payee = await nextAddress(TAPROOT);
      const paying = await signRaw([{ txid: coin.txid, vout: coin.vout }], { [payee]: btc(20_000_000), [await chain.minerAddressOf('bech32')]: btc(total - 20_000_000 - 2_000) });
      const payment = await chain.rpc.call<string>('sendrawtransaction', [paying]);
      await settle('the payment in the mempool');
      const conflicting = await signRaw([{ txid: coin.txid, vout: coin.vout }], { [await chain.minerAddressOf('bech32')]: btc(total - 50_000) });
      await chain.rpc.call('sendrawtransaction', [conflicting]);
      expect(await chain.inMempool(payment), 'the payment evicted from Core\'s mempool').toBe(false);
      await settle('the payment double-spent');
      await chain.mine(1);
      await settle('the double spend mined');
    }, STEP_TEST_MS);

    it('a wallet created with a birthday in the past finds its payments and its spend', async () => {
      await createOnBoth(LATE, heightBeforePayments);
      await settle('the late wallet scanned');
      expect((await reference.client.details(LATE)).txlist.length, 'the late wallet\'s history (two payments, one spend)').toBe(3);
      await nextAddress(LATE);
      await settle('the late wallet\'s next address');
    }, STEP_TEST_MS);

    async function descriptorWithChecksum(descriptor: string): Promise<string> {
      const { checksum } = await chain.rpc.call('getdescriptorinfo', [stripChecksum(descriptor)]);
      return `${stripChecksum(descriptor)}#${checksum}`;
    }

    /** A miner transaction of these inputs and outputs, signed (not sent). */
    async function signRaw(inputs: Array<{ txid: string; vout: number }>, outputs: Record<string, number>): Promise<string> {
      const raw = await chain.rpc.call<string>('createrawtransaction', [inputs, outputs, 0, true]);
      const signed = await chain.miner.call('signrawtransactionwithwallet', [raw]);
      expect(signed.complete).toBe(true);
      return signed.hex;
    }
  });
}
