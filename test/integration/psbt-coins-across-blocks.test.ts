/**
 * PSBT creation keeps each coin's record from one stored revision to the next while the coin is unchanged, so
 * that a block does not rebuild every coin of a large wallet. Walked along the whole recorded timeline (payments,
 * mempool spends, a replacement, confirmations): at every snapshot, the coins a long-running service spends from
 * are exactly those a service that has just loaded the wallet builds, and a PSBT created then spends only coins
 * the wallet lists as unspent, with their funding transactions as they are now.
 */
import { afterEach, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parsePsbt } from '../../src/core/psbt/index.js';
import { serializeTransaction, txid as transactionId } from '../../src/core/tx.js';
import { WalletScriptsCache, WalletStateCache } from '../../src/services/wallet-state.js';
import { WalletCoins } from '../../src/services/wallets/coins.js';
import { request } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, timeline, WALLET_IDS, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

/** A receive address far past the gap of another fixture wallet: paid by nobody in the timeline. */
const paymentFrom = (alias: string) => {
  const payee = alias === 'w_tr' ? 'w_wpkh' : 'w_tr';
  return new DescriptorDeriver(parseDescriptor(wallets[payee]!.recv_descriptor, NETWORKS.regtest)).derive(90).address;
};

let world: WalletWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('at every snapshot, the coins carried from revision to revision are those a fresh load builds, and PSBTs spend only them', async () => {
  world = await startWalletWorld({ snapshot: 0 });
  await importFixtureWallets(world);
  const { runtime } = world.server.running;
  const carried = runtime.services.wallets.coins;
  let psbtsMade = 0;
  for (let snapshot = 0; snapshot < timeline.snapshots.length; snapshot++) {
    world.node.setSnapshot(snapshot);
    expect((await runtime.services.sync.runOnce()).ran).toBe(true);
    const scripts = new WalletScriptsCache();
    const fresh = new WalletCoins({ store: runtime.store, network: 'regtest', access: runtime.services.wallets.access, states: new WalletStateCache(runtime.store, scripts), scripts });
    for (const alias of WALLET_IDS) {
      const wallet = (await runtime.store.wallets.findByAlias(alias))!;
      const kept = await carried.forSpending(wallet.id);
      const loaded = await fresh.forSpending(wallet.id);
      expect(kept.revision, `${alias} at snapshot ${snapshot}`).toBe(loaded.revision);
      expect(kept.tipHeight).toBe(loaded.tipHeight);
      expect(kept.utxos, `${alias} at snapshot ${snapshot}`).toEqual(loaded.utxos);

      // What the API lists as unspent now, by outpoint: a PSBT may spend nothing else.
      // The read path's list, built apart from PSBT creation's records: the same coins, amounts and depths.
      const details = await walletDetails(world, alias);
      const listed = new Map<string, any>(details.utxo.map((u: any) => [`${u.txid}:${u.vout}`, u]));
      expect(new Set(kept.utxos.map((u) => `${u.txid}:${u.vout}`))).toEqual(new Set(listed.keys()));
      for (const u of kept.utxos) {
        const shown = listed.get(`${u.txid}:${u.vout}`);
        expect(BigInt(shown.amount_sat)).toBe(u.valueSat);
        expect(shown.confirmations, `${alias} at snapshot ${snapshot}: ${u.txid}:${u.vout}`).toBe(u.blockHeight === null ? 0 : kept.tipHeight - u.blockHeight + 1);
      }
      const created = await request(`${world.server.api}/wallets/${alias}/psbt`, {
        method: 'POST',
        headers: world.auth,
        json: { recipients: [{ address: paymentFrom(alias), amount: 10_000, unit: 'sat' }], fee_rate: 2 },
      });
      // Safe coins (Core's trusted balance) pay; a wallet holding less pays nothing.
      if (details.balance.confirmed_sat < 20_000) {
        expect(created.body.code, created.text).toBe('insufficient_funds');
        continue;
      }
      expect(created.status, created.text).toBe(201);
      psbtsMade += 1;
      const psbt = parsePsbt(created.body.result.base64);
      for (const [i, input] of psbt.tx.inputs.entries()) {
        expect(listed.has(`${input.txid}:${input.vout}`), `${alias} at snapshot ${snapshot} spends ${input.txid}:${input.vout}`).toBe(true);
        const funding = psbt.inputs[i]!.nonWitnessUtxo;
        if (funding) expect(transactionId(funding)).toBe(input.txid);
        const record = kept.utxos.find((u) => u.txid === input.txid && u.vout === input.vout)!;
        if (funding) expect(Buffer.from(serializeTransaction(funding)).toString('hex')).toBe(record.prevTxHex);
      }
      const deleted = await request(`${world.server.api}/wallets/${alias}/psbt/${created.body.result.tx.txid}`, { method: 'DELETE', headers: world.auth });
      expect(deleted.status, deleted.text).toBe(200);
    }
  }
  expect(psbtsMade).toBeGreaterThan(timeline.snapshots.length);
});
