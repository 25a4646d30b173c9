/**
 * BIP125 replacement of a transaction broadcast through the service, against a real Bitcoin Core: once
 * the wallet details show the original in the mempool, its replacement is created (without listing
 * PSBTs first), signed, broadcast, and evicts the original from Core's mempool. At each step the wallet
 * details' `pending_psbts` and `reserved_by` agree with the PSBT list.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { Client, cosign, describeWithBitcoind, fixtureWallets, paidTo, psbtInputs, sats, startChainWorld, type ChainWorld } from './chain-world.js';

const ID = 'w_wsh2of3';
const FUNDING = [40_000_000, 30_000_000];
const FUNDED = FUNDING.reduce((a, b) => a + b, 0);

/** The wallet details (read first) and the PSBT list agree: same pending count, each coin reserved by the listed PSBT spending it. */
async function expectDetailsAgreeWithList(client: Client, step: string): Promise<Record<string, any>> {
  const details = await client.details(ID);
  const list = await client.psbts(ID);
  expect(details.pending_psbts, `${step}: pending_psbts, while the PSBT list holds ${JSON.stringify(Object.keys(list))}`).toBe(Object.keys(list).length);
  const holder = new Map<string, string>();
  for (const [txid, record] of Object.entries(list)) for (const outpoint of psbtInputs(record)) holder.set(outpoint, txid);
  for (const u of details.utxo) {
    const outpoint = `${u.txid}:${u.vout}`;
    expect(u.reserved_by, `${step}: reserved_by of ${outpoint}`).toBe(holder.get(outpoint) ?? null);
  }
  return list;
}

async function signAndPut(client: Client, signers: WalletRpc[], txid: string): Promise<void> {
  const unsigned = await client.psbtBase64(ID, txid);
  for (const [k, signer] of signers.entries()) {
    const put = await client.putPsbt(ID, txid, await cosign(signer, unsigned));
    expect(put.status, `PUT of cosigner ${k + 1}: ${put.text}`).toBe(200);
  }
}

describeWithBitcoind('replacing (BIP125) a transaction broadcast through the service', () => {
  let world: ChainWorld;
  let signers: WalletRpc[];
  let watcher: WalletRpc;
  let original: { txid: string; networkTxid: string; record: any } | undefined;
  let replacement: { txid: string; record: any } | undefined;
  let recipients: Array<{ address: string; sat: number }>;

  beforeAll(async () => {
    world = await startChainWorld();
    const { chain, client } = world;
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    watcher = await chain.watcher(ID, wallet);
    signers = await Promise.all(wallet.keys.slice(1).map((key) => chain.signer(`${ID}-${key.key}`, wallet, key)));
    const addresses = [await client.nextAddress(ID), await client.nextAddress(ID)];
    await chain.pay(FUNDING.map((sat, i) => ({ address: addresses[i]!, sat })));
    await chain.mine(1);
    await client.waitForBalance(ID, { total: FUNDED, confirmed: FUNDED });
    recipients = [
      { address: await chain.minerAddressOf('bech32'), sat: 10_000_000 },
      { address: await chain.minerAddressOf('legacy'), sat: 5_000_000 },
    ];
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('the original (rbf, 2 sat/vB) is created, signed, broadcast through the API and replaceable in Core', async () => {
    const { chain, client } = world;
    const record = await client.createPsbt(ID, {
      recipients: recipients.map((r) => ({ address: r.address, amount: r.sat, unit: 'sat' })),
      fee_rate: '2',
      rbf: true,
    });
    const txid: string = record.tx.txid;
    expect(Object.keys(await expectDetailsAgreeWithList(client, 'original created'))).toEqual([txid]);
    await signAndPut(client, signers, txid);
    const sent = await client.broadcast(ID, txid);
    expect(sent.status, sent.text).toBe(200);
    expect(await chain.inMempool(sent.body.txid), 'the original in Core\'s mempool').toBe(true);
    // BIP125 signal: every input's nSequence is below 0xfffffffe.
    const decoded = await chain.rpc.call('getrawtransaction', [sent.body.txid, true]);
    expect(decoded.vin.map((i: any) => i.sequence)).toEqual(decoded.vin.map(() => 0xfffffffd));
    original = { txid, networkTxid: sent.body.txid, record };
  });

  it('once the wallet details show it in the mempool, they no longer count it as a pending PSBT', async () => {
    expect(original, 'the original was not broadcast (see the test above)').toBeDefined();
    const { client } = world;
    await client.waitForTransaction(ID, original!.networkTxid, (n) => n === 0, `the original ${original!.networkTxid} in the mempool`);
    // The details alone (no PSBT listing): the original was broadcast and seen, so nothing is pending.
    const details = await client.details(ID);
    expect(details.pending_psbts, 'pending_psbts once the original is seen in the mempool').toBe(0);
    expect(details.utxo.filter((u: any) => u.reserved_by !== null), 'coins still reserved once the original is seen').toEqual([]);
  });

  it('its replacement (rbf_tx_id, 10 sat/vB), created without listing PSBTs first, is 201 and spends every input of the original', async () => {
    expect(original, 'the original was not broadcast (see the tests above)').toBeDefined();
    const { client } = world;
    const created = await client.send('POST', `/wallets/${ID}/psbt`, {
      recipients: recipients.map((r) => ({ address: r.address, amount: r.sat, unit: 'sat' })),
      fee_rate: '10',
      rbf: true,
      rbf_tx_id: original!.networkTxid,
    });
    expect(created.status, `creating the replacement: ${created.text}`).toBe(201);
    const record = created.body.result;
    expect(psbtInputs(record)).toEqual(expect.arrayContaining(psbtInputs(original!.record)));
    expect(Number(record.fee_rate)).toBeGreaterThanOrEqual(10);
    replacement = { txid: record.tx.txid, record };
    expect(Object.keys(await expectDetailsAgreeWithList(client, 'replacement created'))).toEqual([replacement.txid]);
  });

  it('the replacement, signed and broadcast, evicts the original from Core\'s mempool and is mined', async () => {
    expect(replacement, 'the replacement was not created (see the tests above)').toBeDefined();
    const { chain, client } = world;
    await signAndPut(client, signers, replacement!.txid);
    const sent = await client.broadcast(ID, replacement!.txid);
    expect(sent.status, sent.text).toBe(200);
    const networkTxid: string = sent.body.txid;
    const mempool: string[] = await chain.rpc.call('getrawmempool');
    expect(mempool).toContain(networkTxid);
    expect(mempool).not.toContain(original!.networkTxid);
    const paid = paidTo(await chain.rpc.call('getrawtransaction', [networkTxid, true]));
    for (const r of recipients) expect(paid.get(r.address), `paid to ${r.address}`).toBe(r.sat);
    const fee = sats((await chain.rpc.call('getmempoolentry', [networkTxid])).fees.base);

    await client.waitForTransaction(ID, networkTxid, (n) => n === 0, `the replacement ${networkTxid} in the mempool`);
    const seen = await client.details(ID);
    expect(seen.pending_psbts, 'pending_psbts once the replacement is seen').toBe(0);
    expect(await expectDetailsAgreeWithList(client, 'replacement seen')).toEqual({});

    await chain.mine(1);
    const expected = FUNDED - recipients.reduce((a, r) => a + r.sat, 0) - fee;
    expect(await chain.coreBalance(watcher)).toEqual({ confirmed: expected, unconfirmed: 0, immature: 0, total: expected });
    await client.waitForBalance(ID, { total: expected, confirmed: expected });
    const details = await client.details(ID);
    // The replaced original may be listed as such, but never as confirmed.
    expect(details.txlist.filter((t: any) => t.txid === original!.networkTxid && t.confirmations > 0)).toEqual([]);
  });
});
