/**
 * `wallet_states_kept` below the number of wallets: the reads drop the least recently read state and load it again
 * from the store, and every answer stays right. Seven fixture wallets, at most two states kept, read in turns over
 * HTTP at the last two snapshots of the recorded timeline: each wallet's details equal Bitcoin Core's, and the
 * wallet list's balances equal the details'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/server.js';
import { expectWalletMatchesCore, importFixtureWallets, startWalletWorld, timeline, WALLET_IDS, walletDetails, type WalletWorld } from './wallet-helpers.js';

describe('wallet_states_kept smaller than the wallets', () => {
  let world: WalletWorld;
  beforeAll(async () => {
    world = await startWalletWorld({}, { env: { SERVICE_WALLET_STATES_KEPT: '2' } });
    await importFixtureWallets(world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('answers every wallet as Bitcoin Core does, states dropped and loaded again between reads', async () => {
    expect(world.server.config.walletStatesKept).toBe(2);
    const last = timeline.snapshots.length - 1;
    for (const index of [last - 1, last]) {
      world.node.setSnapshot(index);
      expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
      const snapshot = timeline.snapshots[index];
      const mempool = new Set<string>(snapshot.mempool.map((m: { txid: string }) => m.txid));
      // Forward then backward: with two kept, every read but the turn's first two loads the wallet again.
      for (const id of [...WALLET_IDS, ...[...WALLET_IDS].reverse()]) expectWalletMatchesCore(await walletDetails(world, id), snapshot.expected[id], mempool);
      const listed = await request(`${world.server.api}/wallets?limit=3&offset=2`, { headers: world.auth });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.wallets).toHaveLength(3);
      for (const item of listed.body.wallets) expect(item.balance).toEqual((await walletDetails(world, item.alias)).balance);
    }
  }, 120_000);
});
