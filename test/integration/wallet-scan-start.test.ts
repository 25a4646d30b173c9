/**
 * A new or rescanned wallet is scanned at once, not at the next sync pass: with passes an hour apart, the
 * wallet reaches the node's tip and shows Bitcoin Core's coins right after the request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/server.js';
import { expectWalletMatchesCore, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const last = timeline.snapshots.length - 1;
const snapshot = timeline.snapshots[last];

async function untilScanned(world: WalletWorld, alias: string): Promise<any> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const details = await walletDetails(world, alias);
    if (details.scan === null) return details;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const details = await walletDetails(world, alias);
  throw new Error(`${alias} was not scanned to the tip before the next pass: scan ${JSON.stringify(details.scan)}`);
}

describe('scanning starts when a wallet needs it', () => {
  let world: WalletWorld;
  beforeAll(async () => {
    world = await startWalletWorld({ snapshot: last }, { env: { SERVICE_SYNC_INTERVAL: '3600' } });
    // The first pass (at start) finds no wallet; the next one is an hour away.
    for (let attempt = 0; world.server.running.runtime.services.sync.totals.blocksConnected === 0 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  afterAll(async () => {
    await world?.close();
  });

  it('a wallet created between passes is scanned to the tip at once', async () => {
    const created = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'New', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
    });
    expect(created.status, created.text).toBe(201);
    const details = await untilScanned(world, 'w_wpkh');
    expectWalletMatchesCore(details, snapshot.expected.w_wpkh, new Set(snapshot.mempool.map((m: any) => m.txid)));
  });

  it('a rescan starts at once and restores the same wallet', async () => {
    const before = await walletDetails(world, 'w_wpkh');
    const rescan = await request(`${world.server.api}/wallets/w_wpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: 0 } });
    expect(rescan.status, rescan.text).toBe(202);
    expect(await untilScanned(world, 'w_wpkh')).toEqual(before);
  });
});
