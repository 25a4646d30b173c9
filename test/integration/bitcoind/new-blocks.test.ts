/**
 * A new block reaches the wallets without waiting for the next sync pass: the service long-polls the node for
 * its tip and runs a pass when it moves; likewise a payment into the mempool (the node's mempool looked at
 * every second). With `sync_interval` at 60 s, a payment mined into a block shows in the
 * wallet long before the interval's pass could show it. Stopping the service ends the poll in flight.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Chain, Client, describeWithBitcoind, fixtureWallets, serviceEnv, waitFor } from './chain-world.js';
import { startTestServer, type TestServer } from '../../support/server.js';

const ID = 'w_wsh2of3';
const PAID = 25_000_000;
/** Far above the few seconds a block takes to show, far below the 60 s interval. */
const SHOWS_WITHIN_MS = 20_000;

describeWithBitcoind('new blocks without waiting for the sync interval', () => {
  let chain: Chain;
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    chain = await Chain.start();
    server = await startTestServer({ env: { ...serviceEnv(chain.node, '60'), SERVICE_LOG_LEVEL: 'warn' } });
    client = await Client.forAdmin(server);
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
    await chain?.stop();
  });

  it('a block paying the wallet shows in it before the 60 s pass', async () => {
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    // The import asks for a pass of its own: the wallet reaches the tip without the interval.
    await waitFor(async () => (await client.details(ID)).scan === null, `${ID} to reach the tip`, SHOWS_WITHIN_MS);
    const address = await client.nextAddress(ID);
    await chain.pay([{ address, sat: PAID }]);
    await chain.mine(1);
    await client.waitForBalance(ID, { total: PAID, confirmed: PAID }, SHOWS_WITHIN_MS);
    // A second block, once the first was taken: the poll goes on after telling of a tip.
    const tip = await chain.mine(1);
    await waitFor(async () => (await client.details(ID)).txlist.find((t: any) => t.confirmations === 2), `the payment at 2 confirmations (tip ${tip[0]})`, SHOWS_WITHIN_MS);
  }, 90_000);

  it('a payment into the mempool shows unconfirmed before the 60 s pass', async () => {
    const address = await client.nextAddress(ID);
    // A new address asks for a pass of its own (the gap may grow): the payment comes once that pass is over.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const txid = await chain.pay([{ address, sat: PAID }]);
    await waitFor(async () => (await client.details(ID)).txlist.find((t: any) => t.txid === txid && t.confirmations === 0), `the payment ${txid} unconfirmed`, SHOWS_WITHIN_MS);
    await client.waitForBalance(ID, { total: 2 * PAID, confirmed: PAID }, SHOWS_WITHIN_MS);
  }, 60_000);

  it('stops at once with the poll in flight', async () => {
    const started = Date.now();
    await server.stop();
    // The poll waits up to 30 s for a block: stopping does not wait for it.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
