/**
 * PSBT state follows the chain, not its readers: the sync settles PSBTs in the transaction that writes the
 * wallet's change. Wallets imported over HTTP and synced from the JSON-RPC test node along the recorded
 * timeline: snapshot 8 spends some of w_wpkh's coins in the mempool (a replacement may still win), snapshot
 * 10 confirms the replacement of that spend.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parseTransaction } from '../../src/core/tx.js';
import { request } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;
/** The coins of w_wpkh that snapshot 8 spends in the mempool (later replaced, and the replacement confirmed). */
const spentLater = parseTransaction(timeline.snapshots[8].mempool[0].hex).inputs.map((i) => ({ txid: i.txid, vout: i.vout }));
const outpoint = (o: { txid: string; vout: number }) => `${o.txid}:${o.vout}`;

let world: WalletWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function syncTo(snapshot: number): Promise<void> {
  world!.node.setSnapshot(snapshot);
  expect((await world!.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
}

/** The test node at `snapshot`, and the service with w_wpkh imported and synced to it. */
async function walletSyncedTo(snapshot: number): Promise<WalletWorld> {
  world = await startWalletWorld({ snapshot });
  await importFixtureWallets(world, ['w_wpkh']);
  await syncTo(snapshot);
  return world;
}

const psbtUrl = (rest = '') => `${world!.server.api}/wallets/w_wpkh/psbt${rest}`;

/** The PSBT list, the wallet details' count and every coin's `reserved_by` tell the same story. */
async function expectAgreement(pending: Record<string, string[]>): Promise<void> {
  const list = await request(psbtUrl(), { headers: world!.auth });
  expect(Object.keys(list.body.result).sort()).toEqual(Object.keys(pending).sort());
  const details = await walletDetails(world!, 'w_wpkh');
  expect(details.pending_psbts).toBe(Object.keys(pending).length);
  const heldBy = new Map(Object.entries(pending).flatMap(([txid, coins]) => coins.map((c) => [c, txid] as const)));
  for (const u of details.utxo) expect(u.reserved_by, outpoint(u)).toBe(heldBy.get(outpoint(u)) ?? null);
}

describe('PSBTs settled by the sync', () => {
  it('a PSBT with a coin spent by a confirmed transaction becomes invalid and frees its other coins; the others stay', async () => {
    world = await walletSyncedTo(7);
    const others = (await walletDetails(world, 'w_wpkh')).utxo.filter((u: any) => !spentLater.some((s) => outpoint(s) === outpoint(u)));
    const create = async (inputs: { txid: string; vout: number }[]) => {
      const created = await request(psbtUrl(), { method: 'POST', headers: world!.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs } });
      expect(created.status, created.text).toBe(201);
      return created.body.result.tx.txid as string;
    };
    const doomedInputs = [...spentLater, { txid: others[0].txid, vout: others[0].vout }];
    const doomed = await create(doomedInputs);
    const kept = await create([{ txid: others[1].txid, vout: others[1].vout }]);
    await expectAgreement({ [doomed]: doomedInputs.map(outpoint), [kept]: [outpoint(others[1])] });

    // Snapshot 8: the other spend is only in the mempool; a replacement is still possible, so both stay.
    await syncTo(8);
    await expectAgreement({ [doomed]: doomedInputs.map(outpoint), [kept]: [outpoint(others[1])] });

    // Snapshot 10: the replacement confirmed. The sync itself settled the doomed PSBT: nobody read it.
    await syncTo(10);
    const stored = await world.server.running.runtime.store.psbts.find((await world.server.running.runtime.store.wallets.findByAlias('w_wpkh'))!.id, doomed);
    expect(stored?.status).toBe('invalid');
    await expectAgreement({ [kept]: [outpoint(others[1])] });
    expect((await request(psbtUrl(`/${doomed}`), { headers: world.auth })).status).toBe(404);
    const late = await request(psbtUrl(`/${doomed}`), { method: 'PUT', headers: world.auth, json: { psbt: stored!.psbt } });
    expect(late.status, late.text).toBe(404);
    // Its freed coin can be spent again.
    await create([{ txid: others[0].txid, vout: others[0].vout }]);
  }, 60_000);
});

describe('coins held by pending PSBTs', () => {
  it('are never chosen again, also while the wallet holds unconfirmed change of its own (chosen after confirmed coins)', async () => {
    world = await walletSyncedTo(8);
    // Snapshot 8: three confirmed coins, and the change of a spend still in the mempool (own, so spendable).
    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    const confirmed = coins.filter((u: any) => u.confirmations > 0);
    const change = coins.filter((u: any) => u.confirmations === 0);
    expect([confirmed.length, change.length]).toEqual([3, 1]);
    const payment = (inputs?: { txid: string; vout: number }[]) =>
      request(psbtUrl(), { method: 'POST', headers: world!.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, ...(inputs ? { inputs } : {}) } });
    const holding = await payment(confirmed.map((u: any) => ({ txid: u.txid, vout: u.vout })));
    expect(holding.status, holding.text).toBe(201);

    // Only the change is free: every later creation spends it, and it alone.
    for (let i = 0; i < 5; i++) {
      const next = await payment();
      expect(next.status, next.text).toBe(201);
      expect(next.body.result.tx.vin.map((v: any) => outpoint(v))).toEqual([outpoint(change[0])]);
      expect((await request(psbtUrl(`/${next.body.result.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
    }
    await expectAgreement({ [holding.body.result.tx.txid]: confirmed.map(outpoint) });

    // Once they are free again, confirmed coins pay and the unconfirmed change stays.
    expect((await request(psbtUrl(`/${holding.body.result.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const next = await payment();
      expect(next.status, next.text).toBe(201);
      expect(next.body.result.tx.vin.map((v: any) => outpoint(v)), 'spends confirmed coins only').not.toContain(outpoint(change[0]));
      expect((await request(psbtUrl(`/${next.body.result.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
    }
  }, 60_000);
});
