/**
 * The events of a full 2-of-3 flow against a real Bitcoin Core, as a webhook receives them: created, signed,
 * signed, ready, broadcast, the transaction seen, confirmed at 1 and at the configured depth. Also read from
 * the live stream, which tells the same story.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer } from '../../support/server.js';
import { readStream, startReceiver, verifySignature, type Receiver } from '../webhook-helpers.js';
import { cosign, describeWithBitcoind, fixtureWallets, startChainWorld, waitFor, type ChainWorld } from './chain-world.js';

const ID = 'w_wsh2of3';
const DEPTH = 3;

describeWithBitcoind('events of a 2-of-3 flow against a real Bitcoin Core', () => {
  let world: ChainWorld;
  let receiver: Receiver;

  beforeAll(async () => {
    world = await startChainWorld({ env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True', SERVICE_CONFIRMATIONS_NOTIFY: String(DEPTH) } });
    receiver = await startReceiver();
  }, 120_000);

  afterAll(async () => {
    await world?.close();
    await receiver?.close();
  });

  it('created, signed, signed, ready, broadcast, transaction sent, confirmed at 1 and at the configured depth', async () => {
    const { chain, client } = world;
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    await chain.pay([{ address: await client.nextAddress(ID), sat: 100_000_000 }]);
    await chain.mine(1);
    await client.waitForBalance(ID, { total: 100_000_000, confirmed: 100_000_000 });

    const hook = await client.ok('POST', '/webhooks', { url: receiver.url, events: ['psbt.created', 'psbt.signed', 'psbt.ready', 'psbt.broadcast', 'psbt.invalid', 'psbt.deleted', 'transaction.received', 'transaction.sent', 'transaction.confirmed', 'transaction.replaced'], wallets: [ID] }, 201);
    const start = String((await world.server.running.runtime.store.events.lastSeq()));

    const created = await client.createPsbt(ID, { recipients: [{ address: await chain.minerAddressOf('bech32m'), amount: 40_000_000, unit: 'sat' }], fee_rate: '2' });
    const txid: string = created.tx.txid;
    const keys = wallet.keys.slice(-2);
    const signers = await Promise.all(keys.map((key) => chain.signer(`${ID}-events-${key.key}`, wallet, key)));
    const unsigned = await client.psbtBase64(ID, txid);
    for (const signer of signers) {
      const put = await client.putPsbt(ID, txid, await cosign(signer, unsigned));
      expect(put.status, put.text).toBe(200);
    }
    const broadcast = await client.broadcast(ID, txid);
    expect(broadcast.status, broadcast.text).toBe(200);
    const networkTxid: string = broadcast.body.txid;
    await client.waitForTransaction(ID, networkTxid, (n) => n === 0, 'the broadcast transaction in the mempool');
    await chain.mine(1);
    await client.waitForTransaction(ID, networkTxid, (n) => n === 1, 'one confirmation');
    await chain.mine(DEPTH - 1);
    // This transaction's event: the funding transaction reaches the depth a block earlier, and its event alone
    // would end the wait before this one is delivered.
    await waitFor(
      async () => receiver.deliveries.some((d) => d.body.type === 'transaction.confirmed' && d.body.data.txid === networkTxid && d.body.data.confirmations === DEPTH),
      `transaction.confirmed at ${DEPTH}`,
    );

    // The funding transaction reaches the configured depth meanwhile too: the flow is the events of this PSBT and its transaction.
    const all = receiver.deliveries.map((d) => d.body);
    const funding = all.filter((b) => b.data.txid !== txid && b.data.txid !== networkTxid);
    expect(funding.map((b) => `${b.type}:${b.data.confirmations}`)).toEqual([`transaction.confirmed:${DEPTH}`]);
    const bodies = all.filter((b) => !funding.includes(b));
    expect(bodies.map((b) => (b.type === 'transaction.confirmed' ? `${b.type}:${b.data.confirmations}` : b.type))).toEqual([
      'psbt.created',
      'psbt.signed',
      'psbt.signed',
      'psbt.ready',
      'psbt.broadcast',
      'transaction.sent',
      'transaction.confirmed:1',
      `transaction.confirmed:${DEPTH}`,
    ]);
    for (const d of receiver.deliveries) expect(verifySignature(hook.secret, d.headers, d.raw, Date.now() / 1000)).toBe(true);
    expect(bodies.every((b) => b.wallet === ID)).toBe(true);
    for (const b of bodies.slice(0, 5)) expect(b.data.txid).toBe(txid);
    expect(bodies[0].data).toMatchObject({ sigs_count: 0, sigs_required: 2 });
    expect(bodies[1].data).toMatchObject({ signed_by: [keys[0]!.fingerprint], sigs_count: 1 });
    expect(bodies[2].data).toMatchObject({ signed_by: [keys[1]!.fingerprint], sigs_count: 2, signers: keys.map((k) => k.fingerprint).sort() });
    expect(bodies[3].data).toMatchObject({ sigs_count: 2, sigs_required: 2 });
    const fee = Math.round(created.fee * 1e8);
    expect(bodies[5].data).toMatchObject({ txid: networkTxid, category: 'send', amount_sat: -(40_000_000 + fee), fee_sat: fee });
    expect(bodies[6].data).toMatchObject({ txid: networkTxid, confirmations: 1 });
    expect(bodies[7].data).toMatchObject({ txid: networkTxid, confirmations: DEPTH, block_height: bodies[6].data.block_height });

    // The stream, resumed from before the PSBT, holds the same events in the same order.
    const stream = await readStream(`${world.server.api}/events`, { authorization: bearer(client.token), 'last-event-id': start }, all.length);
    expect(stream.messages.map((m) => m.data.id)).toEqual(all.map((b) => b.id));
  }, 180_000);
});
