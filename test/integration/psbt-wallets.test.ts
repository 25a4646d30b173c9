/**
 * PSBTs of wallets imported and synced by the wallet part (no fixture shortcuts): the seven fixture
 * wallets are imported over HTTP, synced from the JSON-RPC test node at the final snapshot, and each
 * pays two recipients through the API alone; after the next sync the PSBT leaves the pending list and
 * its transaction is in the wallet's transaction list. Wallet details show the reservations meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parsePsbt, spentOutputs } from '../../src/core/psbt/index.js';
import { verifyTransaction } from '../../src/core/signing/verify.js';
import { parseTransaction } from '../../src/core/tx.js';
import { signAsCosigner } from '../unit/services/psbt-fixture-wallets.js';
import { request } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, timeline, WALLET_IDS, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const regtest = NETWORKS.regtest;
const LAST = timeline.snapshots.length - 1;
const external = ['w_tr', 'w_pkh'].map((name) => new DescriptorDeriver(parseDescriptor(wallets[name]!.recv_descriptor, regtest)).derive(70).address);

describe('PSBTs of synced wallets, through the API alone', () => {
  let world: WalletWorld;
  const psbtUrl = (alias: string, rest = '') => `${world.server.api}/wallets/${alias}/psbt${rest}`;

  beforeAll(async () => {
    world = await startWalletWorld({ snapshot: LAST });
    await importFixtureWallets(world);
    expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('every fixture wallet: create, reserve, sign, broadcast, seen after sync', async () => {
    const sent: { alias: string; txid: string; psbtTxid: string }[] = [];
    for (const alias of WALLET_IDS) {
      const wallet = wallets[alias]!;
      const created = await request(psbtUrl(alias), {
        method: 'POST',
        headers: world.auth,
        json: { recipients: [{ address: external[0], amount: '0.0111', label: 'paid by psbt' }, { address: external[1], amount: 222_000, unit: 'sat' }], fee_rate: 6 },
      });
      expect(created.status, created.text).toBe(201);
      let record = created.body.result;
      const psbtTxid: string = record.tx.txid;

      // The wallet details show the reservation and the pending count.
      const details = await walletDetails(world, alias);
      expect(details.pending_psbts).toBe(1);
      const reserved = details.utxo.filter((u: any) => u.reserved_by === psbtTxid).map((u: any) => `${u.txid}:${u.vout}`).sort();
      expect(reserved).toEqual(record.tx.vin.map((i: any) => `${i.txid}:${i.vout}`).sort());

      for (let k = 0; k < wallet.sigs_required; k++) {
        const put = await request(psbtUrl(alias, `/${psbtTxid}`), { method: 'PUT', headers: world.auth, json: { psbt: signAsCosigner(record.base64, alias, k) } });
        expect(put.status, put.text).toBe(200);
        expect(put.body.result.sigs_count).toBe(k + 1);
        record = put.body.result;
      }
      const broadcast = await request(psbtUrl(alias, `/${psbtTxid}/broadcast`), { method: 'POST', headers: world.auth });
      expect(broadcast.status, broadcast.text).toBe(200);
      const tx = parseTransaction(broadcast.body.hex);
      expect(verifyTransaction(tx, spentOutputs(parsePsbt(record.base64)).map((o) => o!))).toMatchObject({ valid: true });
      sent.push({ alias, txid: broadcast.body.txid, psbtTxid });
    }

    // The node holds the transactions in its mempool; the next sync brings them into the wallets.
    expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
    for (const { alias, txid, psbtTxid } of sent) {
      const list = await request(psbtUrl(alias), { headers: world.auth });
      expect(list.status).toBe(200);
      expect(list.body.result[psbtTxid]).toBeUndefined();
      const details = await walletDetails(world, alias);
      expect(details.txlist.map((t: any) => t.txid)).toContain(txid);
      expect(details.pending_psbts).toBe(0);
      expect(details.utxo.every((u: any) => u.reserved_by === null)).toBe(true);
    }
  }, 120_000);
});
