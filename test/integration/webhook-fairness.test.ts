/**
 * Delivery is fair between users: one user's receivers that never answer hold only that user's sending
 * slots, and another user's event is delivered in the next round while they still hang. A real server with
 * its own delivery rounds (no rounds run by hand), receivers on loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { SLOTS_PER_USER } from '../../src/services/events/deliverer.js';
import { basicAuth, bearer, request } from '../support/server.js';
import { startWalletWorld, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';
import { startReceiver, type Receiver } from './webhook-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;

/** A receiver that reads each request and never answers; it counts the requests it holds open. */
interface HangingReceiver {
  url: string;
  open: Set<ServerResponse>;
  arrived: number;
  mostOpen: number;
  close(): Promise<void>;
}

async function startHangingReceiver(): Promise<HangingReceiver> {
  const hanging: HangingReceiver = { url: '', open: new Set(), arrived: 0, mostOpen: 0, close: async () => undefined };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    hanging.arrived++;
    hanging.open.add(res);
    hanging.mostOpen = Math.max(hanging.mostOpen, hanging.open.size);
    res.on('close', () => hanging.open.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  hanging.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hanging.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return hanging;
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
};

let world: WalletWorld | undefined;
let hanging: HangingReceiver | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await world?.close();
  await hanging?.close();
  await receiver?.close();
  world = hanging = receiver = undefined;
});

describe('webhook delivery between users', () => {
  it("delivers another user's event in the next round while one user's receivers hang", async () => {
    world = await startWalletWorld({ snapshot: 7 }, { env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' } });
    const { services } = world.server.running.runtime;
    hanging = await startHangingReceiver();
    receiver = await startReceiver();

    // sam: one wallet, 19 webhooks whose receiver never answers, each given every transaction of the wallet.
    await services.users.addUser('sam', 'sam-password-1', { admin: false });
    const samToken = await request(`${world.server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('sam', 'sam-password-1') }, json: { jwt_token_description: 'sam', jwt_token_life: '1 days' } });
    const sam = { authorization: bearer(samToken.body.jwt_token) };
    const samWallet = await request(`${world.server.api}/wallets`, { method: 'POST', headers: sam, json: { name: 'Sam', alias: 'sam_tr', recv_descriptor: wallets.w_tr!.recv_descriptor, change_descriptor: wallets.w_tr!.change_descriptor, birthday: 0 } });
    expect(samWallet.status, samWallet.text).toBe(201);
    for (let i = 0; i < 19; i++) {
      const hook = await request(`${world.server.api}/webhooks`, { method: 'POST', headers: sam, json: { url: `${hanging.url}/hook-${i}`, events: ['transaction.received', 'transaction.sent', 'transaction.confirmed'], wallets: ['sam_tr'] } });
      expect(hook.status, hook.text).toBe(201);
    }
    // admin: one wallet, one webhook that answers at once.
    const imported = await request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 } });
    expect(imported.status, imported.text).toBe(201);
    const adminHook = await request(`${world.server.api}/webhooks`, { method: 'POST', headers: world.auth, json: { url: receiver.url, events: ['psbt.created'], wallets: ['w_wpkh'] } });
    expect(adminHook.status, adminHook.text).toBe(201);

    expect((await services.sync.runOnce()).ran).toBe(true);
    // The service's own rounds take sam's deliveries until sam's slots are full, and they hang there.
    await until(() => hanging!.open.size >= SLOTS_PER_USER);

    const coin = (await walletDetails(world, 'w_wpkh')).utxo[0];
    const started = Date.now();
    const created = await request(`${world.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs: [{ txid: coin.txid, vout: coin.vout }] } });
    expect(created.status, created.text).toBe(201);
    await receiver.waitFor(1);
    const tookMs = Date.now() - started;

    expect(receiver.deliveries[0]!.body).toMatchObject({ type: 'psbt.created', data: { txid: created.body.result.tx.txid } });
    // Delivered while every one of sam's attempts is still waiting for an answer: nothing of sam's ended first.
    expect(hanging.open.size).toBe(SLOTS_PER_USER);
    expect(hanging.arrived).toBe(SLOTS_PER_USER);
    expect(hanging.mostOpen).toBe(SLOTS_PER_USER);
    expect(tookMs).toBeLessThan(5_000); // a round is 0.5 s; an attempt may hang for 10 s
  }, 60_000);
});
