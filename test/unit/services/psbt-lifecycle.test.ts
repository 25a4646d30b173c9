/** Reservations hold on PostgreSQL under parallel creations of two service instances. */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import type { Principal } from '../../../src/services/principal.js';
import { PsbtService } from '../../../src/services/psbts/service.js';
import type { FeeEstimate, RelayFees } from '../../../src/chain/types.js';
import { timeline } from '../engine/support/replay.js';
import { openTestPostgres, type OpenedStore } from '../../support/stores.js';
import { FixtureWalletReader, storeFixtureWallets, wallets } from './psbt-fixture-wallets.js';

const alice: Principal = { userName: 'alice', isAdmin: false };
const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr.recv_descriptor, NETWORKS.regtest)).derive(90).address;

/** A chain backend with Bitcoin Core's default relay fees; broadcasting is not part of these tests. */
const fees = {
  estimateFee: async (): Promise<FeeEstimate | null> => ({ satPerVb: 3, satPerKvb: 3000, blocks: 6 }),
  getRelayFees: async (): Promise<RelayFees> => ({ minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }),
  broadcast: async (): Promise<string> => {
    throw new Error('not used');
  },
};

let opened: OpenedStore | undefined;
afterEach(async () => {
  await opened?.dispose();
  opened = undefined;
});

describe('reservations on PostgreSQL', () => {
  it('two service instances on one database never reserve the same coin', async () => {
    opened = await openTestPostgres();
    await storeFixtureWallets(opened.store);
    const reader = FixtureWalletReader.at(timeline.snapshots.length - 1);
    // Two instances (no shared memory) over one PostgreSQL schema.
    const services: PsbtService[] = [];
    for (let i = 0; i < 2; i++) services.push(new PsbtService({ store: opened.store, access: reader, coins: reader, chain: () => fees, maxFeeRate: 1000, maxPending: 100 }));
    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => services[i % 2]!.create(alice, 'w_wsh2of3', { recipients: [{ address: external, amount: '0.02' }] })),
    );
    const made = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toMatchObject({ code: 'insufficient_funds' });
    expect(made.length).toBeGreaterThan(1);
    const coins = made.flatMap((m) => m.record.tx.vin.map((v) => ('txid' in v ? `${v.txid}:${v.vout}` : 'coinbase')));
    expect(new Set(coins).size).toBe(coins.length);
    // Fee estimated by the backend when fee_rate is absent: 3 sat/vB.
    for (const m of made) expect(Number(m.record.fee_rate)).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
