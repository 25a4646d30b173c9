/**
 * PSBT lifecycle against the wallet's chain state: a PSBT whose coin is spent elsewhere becomes
 * invalid and frees its other coins; reservations hold on PostgreSQL under parallel creations.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { NETWORKS } from '../../../src/core/network.js';
import { parseTransaction } from '../../../src/core/tx.js';
import type { Principal } from '../../../src/services/principal.js';
import { PsbtService } from '../../../src/services/psbts/service.js';
import type { FeeEstimate, RelayFees } from '../../../src/chain/types.js';
import { applyAndPersist, timeline, updatesTo } from '../engine/support/replay.js';
import { openTestPostgres, openTestSqlite, type OpenedStore } from '../../support/stores.js';
import { FixtureWalletReader, wallets } from './psbt-fixture-wallets.js';

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

/** Moves the reader's wallets along the fixture timeline, from its snapshot to `to`. */
function advance(reader: FixtureWalletReader, to: number): void {
  let chain: string[] = timeline.snapshots[reader.snapshot].chain;
  for (let i = reader.snapshot + 1; i <= to; i++) {
    for (const update of updatesTo(chain, i)) applyAndPersist(reader.state, reader.rows, update);
    chain = timeline.snapshots[i].chain;
  }
  reader.snapshot = to;
}

/** Snapshot 8 pays from w_wpkh in the mempool (later replaced and confirmed): the coins that spend takes. */
const spentLater = parseTransaction(timeline.snapshots[8].mempool[0].hex).inputs.map((i) => ({ txid: i.txid, vout: i.vout }));

/** A service on a fresh SQLite store whose wallets stand at snapshot 7, and w_wpkh's coins that snapshot 8 does not spend. */
async function atSnapshot7() {
  opened = await openTestSqlite();
  const reader = FixtureWalletReader.at(7);
  const service = new PsbtService({ store: opened.store, wallets: reader, chain: () => fees, maxFeeRate: 1000 });
  const others = (await reader.loadForSpending('id-w_wpkh')).utxos.filter((u) => !spentLater.some((s) => s.txid === u.txid && s.vout === u.vout));
  return { store: opened.store, reader, service, others: others.map((u) => ({ txid: u.txid, vout: u.vout })) };
}

describe('a PSBT whose coins are spent elsewhere', () => {
  it('becomes invalid once the spend confirms, and frees its other coins', async () => {
    const { store, reader, service, others } = await atSnapshot7();
    const { txid } = await service.create(alice, 'w_wpkh', {
      recipients: [{ address: external, amount: '0.05' }],
      inputs: [...spentLater, others[0]!],
    });
    expect((await service.reservedOutpoints('id-w_wpkh')).size).toBe(spentLater.length + 1);

    // Snapshot 8: the other spend is only in the mempool; a replacement is still possible, so the PSBT stays.
    advance(reader, 8);
    expect((await service.list(alice, 'w_wpkh')).map((p) => p.txid)).toEqual([txid]);

    // Snapshot 10: the replacement confirmed; the coin is gone, so is the PSBT, and its other coin is free.
    advance(reader, 10);
    expect(await service.list(alice, 'w_wpkh')).toEqual([]);
    expect(await service.reservedOutpoints('id-w_wpkh')).toEqual(new Map());
    expect((await store.psbts.find('id-w_wpkh', txid))?.status).toBe('invalid');
    await expect(service.get(alice, 'w_wpkh', txid)).rejects.toMatchObject({ code: 'psbt_not_found' });
  }, 60_000);
});

describe('reading one PSBT whose coins were spent elsewhere', () => {
  it('marks that PSBT invalid without touching the others', async () => {
    const { store, reader, service, others } = await atSnapshot7();
    const doomed = await service.create(alice, 'w_wpkh', { recipients: [{ address: external, amount: '0.01' }], inputs: [...spentLater, others[0]!] });
    const kept = await service.create(alice, 'w_wpkh', { recipients: [{ address: external, amount: '0.01' }], inputs: [others[1]!] });

    advance(reader, 10);

    // The first read after the confirmed spend is of the doomed PSBT itself, not a listing.
    await expect(service.get(alice, 'w_wpkh', doomed.txid)).rejects.toMatchObject({ code: 'psbt_not_found' });
    expect((await store.psbts.find('id-w_wpkh', doomed.txid))?.status).toBe('invalid');
    expect([...(await service.reservedOutpoints('id-w_wpkh')).values()]).toEqual([kept.txid]);
    expect((await service.get(alice, 'w_wpkh', kept.txid)).record.tx.txid).toBe(kept.txid);
    expect((await service.list(alice, 'w_wpkh')).map((p) => p.txid)).toEqual([kept.txid]);
  }, 60_000);
});

describe('reservations on PostgreSQL', () => {
  it('two service instances on one database never reserve the same coin', async () => {
    opened = await openTestPostgres();
    const reader = FixtureWalletReader.at(timeline.snapshots.length - 1);
    // Two instances (no shared memory) over one PostgreSQL schema.
    const services: PsbtService[] = [];
    for (let i = 0; i < 2; i++) services.push(new PsbtService({ store: opened.store, wallets: reader, chain: () => fees, maxFeeRate: 1000 }));
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
