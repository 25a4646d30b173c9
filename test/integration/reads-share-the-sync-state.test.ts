/**
 * The reads of a wallet past `wallet_states_shared_from` transactions, which the sync follows, use the sync's record
 * of it (shared-lists.ts): they never load the wallet from the store themselves, and still answer as Bitcoin Core
 * does at every step of the fixture timeline (payments, a reorg, a replacement), reads racing the sync's passes
 * included; after a rescan they load the wallet themselves until the sync has read it again, then share it again.
 * With sharing off, the same reads load each wallet from the store (what the counts observe). Recorded
 * Bitcoin Core answers; SQLite and PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import type { WalletRepository } from '../../src/store/repositories.js';
import { request } from '../support/server.js';
import { WALLET_IDS, expectWalletMatchesCore, importFixtureWallets, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;

let world: WalletWorld;
afterEach(async () => {
  await world?.close();
});

/** Counts the store reads a reads' own load or catch-up makes (the sync reads wallets in batches: `chainRowsOfMany`). */
function countReadsLoads(wallets: WalletRepository): { count: number } {
  const counted = { count: 0 };
  for (const method of ['chainRows', 'chainRowsInSlices', 'chainChangesSince'] as const) {
    const original = wallets[method].bind(wallets) as (...args: unknown[]) => unknown;
    (wallets as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      counted.count++;
      return original(...args);
    };
  }
  return counted;
}

async function syncTo(snapshot: number): Promise<void> {
  world.node.setSnapshot(snapshot);
  expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
}

async function expectEveryWalletAsCore(snapshot: number): Promise<void> {
  const expected = timeline.snapshots[snapshot];
  const mempool = new Set<string>(expected.mempool.map((m: { txid: string }) => m.txid));
  for (const alias of WALLET_IDS) expectWalletMatchesCore(await walletDetails(world, alias), expected.expected[alias], mempool);
}

describe.each(['sqlite', 'postgres'] as const)('reads over the sync state, on %s', (database) => {
  it('answer as Core at every step without loading a wallet from the store, reads racing the passes', async () => {
    world = await startWalletWorld({}, { database, env: { SERVICE_WALLET_STATES_SHARED_FROM: '1' } });
    await importFixtureWallets(world);
    await syncTo(5);
    const loads = countReadsLoads(world.server.running.runtime.store.wallets);

    await expectEveryWalletAsCore(5);
    // Snapshots 6-10: blocks, a reorg, a replacement; each read while the sync applies the next step.
    for (const snapshot of [6, 7, 8, 9, 10]) {
      world.node.setSnapshot(snapshot);
      const [pass] = await Promise.all([world.server.running.runtime.services.sync.runOnce(), ...WALLET_IDS.map((alias) => walletDetails(world, alias))]);
      expect(pass.ran).toBe(true);
      await expectEveryWalletAsCore(snapshot);
    }
    // A PSBT spends coins whose previous transactions come from the sync's record.
    const psbt = await request(`${world.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2 } });
    expect(psbt.status, psbt.text).toBe(201);
    expect(loads.count).toBe(0);

    // A rescan writes the wallet's rows: until the sync has loaded them again, the reads load the wallet themselves;
    // then they share the sync's record again (no further load of their own).
    const rescan = await request(`${world.server.api}/wallets/w_wpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: 0 } });
    expect(rescan.status, rescan.text).toBe(202);
    await walletDetails(world, 'w_wpkh');
    const ownLoads = loads.count;
    expect(ownLoads).toBeGreaterThan(0);
    await syncTo(10);
    await expectEveryWalletAsCore(10);
    expect(loads.count).toBe(ownLoads);
  }, 120_000);
});

describe('reads with sharing off', () => {
  it('load each wallet from the store themselves, and answer the same', async () => {
    world = await startWalletWorld({}, { env: { SERVICE_WALLET_STATES_SHARED_FROM: '0' } });
    await importFixtureWallets(world);
    await syncTo(5);
    const loads = countReadsLoads(world.server.running.runtime.store.wallets);
    await expectEveryWalletAsCore(5);
    expect(loads.count).toBeGreaterThanOrEqual(WALLET_IDS.length);
  }, 60_000);
});
