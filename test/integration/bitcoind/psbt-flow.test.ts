/**
 * Each of the seven fixture wallet types, end to end against a real Bitcoin Core: imported watch-only
 * over HTTP, funded by the node's miner, a PSBT with two recipients created by the service, signed by
 * each required cosigner on a Core signer wallet of its own, merged by the service, broadcast through
 * the API, and checked by Core itself (mempool, amounts, fee rate, size), then mined.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { WALLET_IDS, cosign, describeWithBitcoind, fixtureWallets, paidTo, sats, startChainWorld, type ChainWorld } from './chain-world.js';

/** Three payments to each wallet (distinct receive addresses), all in one block. */
const FUNDING = [50_000_000, 30_000_000, 20_000_000];
const FUNDED = FUNDING.reduce((a, b) => a + b, 0);
const FEE_RATE = 3.5;

describeWithBitcoind('the PSBT flow of every wallet type against a real Bitcoin Core', () => {
  let world: ChainWorld;
  const watchers = new Map<string, WalletRpc>();
  const signers = new Map<string, WalletRpc[]>();

  beforeAll(async () => {
    world = await startChainWorld();
    const { chain, client } = world;
    const birthday = await chain.height();
    const payments: Array<{ address: string; sat: number }> = [];
    for (const id of WALLET_IDS) {
      const wallet = fixtureWallets[id]!;
      await client.importWallet(id, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday });
      watchers.set(id, await chain.watcher(id, wallet));
      // The cosigners that sign: the last `threshold` keys (so 2-of-3 wallets are signed without the first key).
      const keys = wallet.keys.slice(-wallet.sigs_required);
      signers.set(id, await Promise.all(keys.map((key) => chain.signer(`${id}-${key.key}`, wallet, key))));
      const addresses: string[] = [];
      for (const _ of FUNDING) addresses.push(await client.nextAddress(id));
      expect(new Set(addresses).size, `${id}: distinct receive addresses`).toBe(FUNDING.length);
      FUNDING.forEach((sat, i) => payments.push({ address: addresses[i]!, sat }));
    }
    await chain.pay(payments);
    await chain.mine(1);
    for (const id of WALLET_IDS) await client.waitForBalance(id, { total: FUNDED, confirmed: FUNDED });
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  });

  for (const id of WALLET_IDS) {
    it(`${id}: create, sign by each cosigner, merge, broadcast, confirm`, async () => {
      const { chain, client } = world;
      const wallet = fixtureWallets[id]!;
      const recipients = [
        { address: await chain.minerAddressOf('bech32m'), sat: 25_000_000 },
        { address: await chain.minerAddressOf(id === 'w_pkh' ? 'p2sh-segwit' : 'legacy'), sat: 12_345_678 },
      ];
      const created = await client.createPsbt(id, {
        recipients: [
          { address: recipients[0]!.address, amount: '0.25', unit: 'btc' },
          { address: recipients[1]!.address, amount: recipients[1]!.sat, unit: 'sat' },
        ],
        fee_rate: String(FEE_RATE),
      });
      const txid: string = created.tx.txid;
      expect(created.sigs_count).toBe(0);
      expect(Object.keys(await client.psbts(id))).toEqual([txid]);

      // Each cosigner signs the unsigned PSBT on its own, as hardware wallets would.
      const unsigned = await client.psbtBase64(id, txid);
      expect(unsigned).toBe(created.base64);
      const copies = [];
      for (const signer of signers.get(id)!) copies.push(await cosign(signer, unsigned));
      for (const [k, copy] of copies.entries()) {
        const put = await client.putPsbt(id, txid, copy);
        expect(put.status, `PUT of cosigner ${k + 1}: ${put.text}`).toBe(200);
        expect(put.body.result.sigs_count, `sigs_count after cosigner ${k + 1}`).toBe(k + 1);
      }
      const signed = await client.psbtRecord(id, txid);
      expect(signed.sigs_count).toBe(wallet.sigs_required);

      // Core finalizes a copy of the merged PSBT and would accept the transaction.
      const finalized = await chain.rpc.call('finalizepsbt', [await client.psbtBase64(id, txid)]);
      expect(finalized.complete, 'Core finalizes the merged PSBT').toBe(true);
      const [accept] = await chain.rpc.call('testmempoolaccept', [[finalized.hex]]);
      expect(accept, JSON.stringify(accept)).toMatchObject({ allowed: true });

      const broadcast = await client.broadcast(id, txid);
      expect(broadcast.status, broadcast.text).toBe(200);
      const networkTxid: string = broadcast.body.txid;
      expect(broadcast.body.hex).toBe(finalized.hex);
      expect(networkTxid).toBe(accept.txid);

      // What Core says about the transaction it now holds.
      const entry = await chain.rpc.call('getmempoolentry', [networkTxid]);
      const decoded = await chain.rpc.call('getrawtransaction', [networkTxid, true]);
      const paid = paidTo(decoded);
      for (const r of recipients) expect(paid.get(r.address), `paid to ${r.address}`).toBe(r.sat);
      const fee = sats(entry.fees.base);
      expect(fee / entry.vsize, `fee rate ${fee}/${entry.vsize}`).toBeGreaterThanOrEqual(FEE_RATE);
      expect(sats(created.fee)).toBe(fee);
      expect(created.tx_full_size, `tx_full_size ${created.tx_full_size} vs Core's vsize ${entry.vsize}`).toBeGreaterThanOrEqual(entry.vsize);

      // Mined: the service agrees with Core's watch-only wallet, and the PSBT is no longer pending.
      await chain.mine(1);
      const spent = recipients.reduce((a, r) => a + r.sat, 0) + fee;
      const core = await chain.coreBalance(watchers.get(id)!);
      expect(core).toEqual({ confirmed: FUNDED - spent, unconfirmed: 0, immature: 0, total: FUNDED - spent });
      await client.waitForBalance(id, { total: core.total, confirmed: core.confirmed });
      await client.waitForTransaction(id, networkTxid, (n) => n === 1, `${networkTxid} with one confirmation`);
      expect(await client.psbts(id)).toEqual({});
      const details = await client.details(id);
      expect(details.pending_psbts).toBe(0);
      expect(details.utxo.filter((u: any) => u.reserved_by !== null)).toEqual([]);
    });
  }
});
