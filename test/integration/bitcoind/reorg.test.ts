/**
 * Reorgs under a pending PSBT, on a real Bitcoin Core (`invalidateblock`):
 * (a) the block that funded the PSBT's coin is disconnected: the funding transaction is back in the
 *     mempool, the PSBT stays pending and can still be signed and broadcast;
 * (b) the funding transaction is then replaced by a conflicting transaction of the miner, which is
 *     mined: the PSBT leaves the pending list, its coins are freed, the wallet's balance is Core's
 *     watch-only view of the same descriptors, and broadcasting it never answers 200.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { btc, cosign, describeWithBitcoind, fixtureWallets, psbtInputs, sats, startChainWorld, type ChainWorld } from './chain-world.js';

describeWithBitcoind('reorgs under a pending PSBT', () => {
  let world: ChainWorld;

  beforeAll(async () => {
    world = await startChainWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  /** Imports a fixture wallet with its Core watch-only twin and every cosigner. */
  async function setUpWallet(id: string): Promise<{ watcher: WalletRpc; signers: WalletRpc[] }> {
    const { chain, client } = world;
    const wallet = fixtureWallets[id]!;
    await client.importWallet(id, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    return {
      watcher: await chain.watcher(id, wallet),
      signers: await Promise.all(wallet.keys.slice(0, wallet.sigs_required).map((key) => chain.signer(`${id}-${key.key}`, wallet, key))),
    };
  }

  /** The outpoint of the wallet's coin created by `txid`, as the service lists it. */
  async function coinOf(id: string, txid: string): Promise<{ txid: string; vout: number }> {
    const coin = (await world.client.details(id)).utxo.find((u: any) => u.txid === txid);
    expect(coin, `${id}: the coin of ${txid}`).toBeDefined();
    return { txid: coin.txid, vout: coin.vout };
  }

  async function signAll(id: string, txid: string, signers: WalletRpc[]): Promise<void> {
    const unsigned = await world.client.psbtBase64(id, txid);
    for (const [k, signer] of signers.entries()) {
      const put = await world.client.putPsbt(id, txid, await cosign(signer, unsigned));
      expect(put.status, `PUT of cosigner ${k + 1}: ${put.text}`).toBe(200);
      expect(put.body.result.sigs_count).toBe(k + 1);
    }
  }

  it('(a) the funding block is disconnected: the funding transaction is back in the mempool, the PSBT stays pending, is signed and broadcast', async () => {
    const { chain, client } = world;
    const id = 'w_wpkh';
    const { watcher, signers } = await setUpWallet(id);
    const funding = await chain.pay([{ address: await client.nextAddress(id), sat: 30_000_000 }]);
    const [fundingBlock] = await chain.mine(1);
    await client.waitForBalance(id, { total: 30_000_000, confirmed: 30_000_000 });
    const coin = await coinOf(id, funding);
    const recipient = await chain.minerAddressOf('bech32');
    const psbt = await client.createPsbt(id, { recipients: [{ address: recipient, amount: 10_000_000, unit: 'sat' }], fee_rate: '2', inputs: [coin] });
    const txid: string = psbt.tx.txid;

    await chain.rpc.call('invalidateblock', [fundingBlock]);
    expect(await chain.inMempool(funding), 'the funding transaction is back in Core\'s mempool').toBe(true);
    // The competing chain grows back to the same height without it. (Until it does, the PSBT's
    // anti-fee-sniping nLockTime, the tip at its creation, is not final yet: so it is for Core's wallet too.)
    await chain.mineEmpty();
    expect(await chain.inMempool(funding), 'the funding transaction is still in Core\'s mempool').toBe(true);
    expect(await chain.coreBalance(watcher)).toEqual({ confirmed: 0, unconfirmed: 30_000_000, immature: 0, total: 30_000_000 });
    await client.waitForBalance(id, { total: 30_000_000, confirmed: 0 });
    const details = await client.details(id);
    expect(details.utxo.map((u: any) => ({ outpoint: `${u.txid}:${u.vout}`, confirmations: u.confirmations, reserved_by: u.reserved_by }))).toEqual([
      { outpoint: `${coin.txid}:${coin.vout}`, confirmations: 0, reserved_by: txid },
    ]);
    expect(Object.keys(await client.psbts(id)), 'the PSBT is still pending after the reorg').toEqual([txid]);

    await signAll(id, txid, signers);
    const sent = await client.broadcast(id, txid);
    expect(sent.status, sent.text).toBe(200);
    expect(await chain.inMempool(sent.body.txid)).toBe(true);
    const fee = sats((await chain.rpc.call('getmempoolentry', [sent.body.txid])).fees.base);

    await chain.mine(1);
    const expected = 30_000_000 - 10_000_000 - fee;
    expect(await chain.coreBalance(watcher)).toEqual({ confirmed: expected, unconfirmed: 0, immature: 0, total: expected });
    await client.waitForBalance(id, { total: expected, confirmed: expected });
    expect(await client.psbts(id)).toEqual({});
  });

  describe('(b) the funding transaction is replaced by a mined conflict', () => {
    const id = 'w_wsh2of2';
    const kept = 20_000_000;
    let watcher: WalletRpc;
    let txid: string | undefined;

    it('the wallet\'s balance is Core\'s watch-only view', async () => {
      const { chain, client } = world;
      const wallet = await setUpWallet(id);
      watcher = wallet.watcher;
      // A coin that stays: funded and mined first.
      await chain.pay([{ address: await client.nextAddress(id), sat: kept }]);
      await chain.mine(1);

      // The coin that goes: a miner transaction spending one deep coin of the miner, so the conflict can spend it again.
      const [deep] = await chain.miner.call('listunspent', [110]);
      const fundingAddress = await client.nextAddress(id);
      const fundingHex = await signed([{ txid: deep.txid, vout: deep.vout, sequence: 0xfffffffd }], [
        { [fundingAddress]: btc(30_000_000) },
        { [await chain.minerAddressOf('bech32')]: btc(sats(deep.amount) - 30_000_000 - 10_000) },
      ]);
      const funding: string = await chain.rpc.call('sendrawtransaction', [fundingHex]);
      const [fundingBlock] = await chain.mine(1);
      await client.waitForBalance(id, { total: kept + 30_000_000, confirmed: kept + 30_000_000 });

      const coin = await coinOf(id, funding);
      const psbt = await client.createPsbt(id, { recipients: [{ address: await chain.minerAddressOf('bech32'), amount: 10_000_000, unit: 'sat' }], fee_rate: '2', inputs: [coin] });
      txid = psbt.tx.txid;
      expect(psbtInputs(psbt)).toEqual([`${coin.txid}:${coin.vout}`]);
      await signAll(id, txid!, wallet.signers);

      await chain.rpc.call('invalidateblock', [fundingBlock]);
      expect(await chain.inMempool(funding), 'the funding transaction is back in Core\'s mempool').toBe(true);
      const conflictHex = await signed([{ txid: deep.txid, vout: deep.vout }], [{ [await chain.minerAddressOf('bech32')]: btc(sats(deep.amount) - 100_000) }]);
      const conflict: string = await chain.rpc.call('sendrawtransaction', [conflictHex]);
      expect(await chain.inMempool(funding), 'the conflict evicted the funding transaction').toBe(false);
      await chain.mine(1);
      expect((await chain.miner.call('gettransaction', [conflict])).confirmations, 'the conflict is mined').toBe(1);

      const core = await chain.coreBalance(watcher);
      expect(core).toEqual({ confirmed: kept, unconfirmed: 0, immature: 0, total: kept });
      await client.waitForBalance(id, { total: core.total, confirmed: core.confirmed });
      expect((await client.details(id)).utxo.map((u: any) => u.amount_sat)).toEqual([kept]);
    });

    it('the PSBT spending the vanished coin leaves the pending list and reserves nothing', async () => {
      expect(txid, 'the PSBT was not created (see the test above)').toBeDefined();
      const { client } = world;
      expect(Object.keys(await client.psbts(id)), 'the pending PSBT list').toEqual([]);
      const read = await client.send('GET', `/wallets/${id}/psbt/${txid}`);
      expect(read.status, `reading the invalid PSBT: ${read.text}`).toBe(404);
      const details = await client.details(id);
      expect(details.pending_psbts, 'pending_psbts in the wallet details').toBe(0);
      expect(details.utxo.filter((u: any) => u.reserved_by !== null), 'reserved coins').toEqual([]);
    });

    it('broadcasting the PSBT spending the vanished coin never answers 200', async () => {
      expect(txid, 'the PSBT was not created (see the test above)').toBeDefined();
      const { chain, client } = world;
      const sent = await client.broadcast(id, txid!);
      expect([404, 409, 422], `broadcast answered ${sent.status} ${sent.text}`).toContain(sent.status);
      expect((await chain.rpc.call<string[]>('getrawmempool')).length, 'nothing reached Core\'s mempool').toBe(0);
    });
  });

  /** A raw transaction of these inputs and outputs, signed by the miner's wallet. */
  async function signed(inputs: unknown[], outputs: unknown[]): Promise<string> {
    const { chain } = world;
    const raw = await chain.rpc.call('createrawtransaction', [inputs, outputs]);
    const result = await chain.miner.call('signrawtransactionwithwallet', [raw]);
    expect(result.complete, JSON.stringify(result.errors)).toBe(true);
    return result.hex;
  }
});
