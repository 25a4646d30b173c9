/**
 * The sync and the reads of one process hold one wallet in two engine states that share each stored
 * transaction's hex, scripts, values and inputs (docs/adr/0018), against a real Bitcoin Core: while the sync
 * writes new blocks paying the wallet, every read shows one stored revision whole (its balance is the sum of its
 * coins, one coin per payment), the reads' state shares every transaction with the sync's, and a process started
 * on the same store, which loads the wallet alone, shows the same.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EngineState, WalletState } from '../../../src/engine/index.js';
import type { WalletStateCache } from '../../../src/services/wallet-state.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv, waitFor } from './chain-world.js';

const ID = 'w_wpkh';
const FIRST_PAYMENTS = 30;
const BLOCKS_DURING_READS = 4;

/** What a read shows of the wallet, without what changes with the clock. */
const shown = (details: any) => ({ balance: details.balance, utxo: details.utxo, txlist: details.txlist });

describeWithBitcoind('the sync and the reads sharing a wallet\'s transactions', () => {
  let chain: Chain;
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    chain = await Chain.start();
    server = await startTestServer({ env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn' } });
    client = await Client.forAdmin(server);
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
    await chain?.stop();
  });

  it('reads show whole stored revisions during sync writes, share the sync\'s transactions, and equal a fresh load', async () => {
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    await waitFor(async () => (await client.details(ID)).scan === null, `${ID} to reach the tip`);
    const addresses: string[] = [];
    for (let i = 0; i < 10; i++) addresses.push(await client.nextAddress(ID));
    let total = 0;
    let payments = 0;
    const pay = async () => {
      const sat = 100_000 + payments;
      await chain.pay([{ address: addresses[payments % addresses.length]!, sat }]);
      total += sat;
      payments++;
    };
    for (let i = 0; i < FIRST_PAYMENTS; i++) await pay();
    await chain.mine(1);
    await client.waitForBalance(ID, { total, confirmed: total });

    // New blocks paying the wallet while reads go on: each answer is one revision whole.
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const details = await client.details(ID);
        const coins = details.utxo.reduce((sum: number, u: any) => sum + u.amount_sat, 0);
        expect(coins).toBe(details.balance.total_sat);
        expect(details.txlist.length).toBe(details.utxo.length); // every transaction is one payment, nothing spent
        reads++;
      }
    })();
    for (let i = 0; i < BLOCKS_DURING_READS; i++) {
      await pay();
      await chain.mine(1);
      await client.waitForBalance(ID, { total, confirmed: total });
    }
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(BLOCKS_DURING_READS);

    // The reads' state holds every transaction as the sync's does, sharing its parts.
    const services = server.running.runtime.services;
    const stored = (await server.running.runtime.store.wallets.findByAlias(ID))!;
    const states = (services.wallets.coins as unknown as { deps: { states: WalletStateCache } }).deps.states;
    const readsWallet = (await states.view(stored)).state.wallets.get(stored.id)!;
    const syncWallet = (services.sync as unknown as { state: EngineState }).state.wallets.get(stored.id) as WalletState;
    expect(readsWallet.txs.size).toBe(payments);
    for (const [txid, held] of readsWallet.txs) {
      const synced = syncWallet.txs.get(txid)!;
      expect(held.raw).toBe(synced.raw);
      expect(held.tx.inputs).toBe(synced.tx.inputs);
      expect(held).not.toBe(synced); // each state keeps its own record: status and owners are each state's
    }
    const last = shown(await client.details(ID));
    await server.stop();

    // A process started on the store loads the wallet on its own: it shows the same.
    const again = await startTestServer({ dataFolder: server.dataFolder, env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn' } });
    try {
      const fresh = await Client.forAdmin(again);
      await fresh.waitForBalance(ID, { total, confirmed: total });
      expect(shown(await fresh.details(ID))).toEqual(last);
    } finally {
      await again.stop();
    }
  }, 180_000);
});
