/**
 * kill -9 a real `wcs serve` process at a random moment while clients create tokens, in a bounded
 * loop, on SQLite and on PostgreSQL. After each kill the store opens (the service restarts on it),
 * passes an integrity check, and holds every token whose creation was answered 201. The same for
 * PSBTs: every creation answered 201 is there unless its deletion was answered 200, every answered
 * deletion stays deleted, and no coin is reserved by two PSBTs.
 */
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer } from '../support/server.js';
import { NETWORKS } from '../../src/core/network.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { startRpcTestServer } from '../support/rpc-server.js';
import { adminImportsWpkh, nodeEnv, timeline, wallets } from './wallet-helpers.js';
import { createSharedStore, sqliteIntegrity, killHard, killStartedInstances, postgresClient, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';

const ROUNDS = 5;
const CLIENTS = 4;
/** Logins cut by a kill count as failed for a minute; this test is about durability, not that limit. */
const NO_LOGIN_LIMIT = { SERVICE_RATE_LIMIT: '1000' };
const admin = basicAuth('admin', TEST_ADMIN_PASSWORD);

interface Acknowledged {
  id: string;
  token: string;
}

/** Counts acknowledged writes, so a kill comes only after the server has answered some. */
interface Progress {
  acks: number;
}

/** Kills `instance` at a random moment after at least one more write was acknowledged. */
async function killAfterProgress(instance: Instance, progress: Progress): Promise<void> {
  const start = progress.acks;
  for (let waited = 0; progress.acks === start && waited < 20_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 600));
  await killHard(instance);
}

/** Creates tokens until the server stops answering; returns those answered 201. */
async function createTokensUntilKilled(instance: Instance, client: number, round: number, progress: Progress): Promise<Acknowledged[]> {
  const acknowledged: Acknowledged[] = [];
  for (let i = 0; ; i++) {
    try {
      const response = await fetch(`${instance.api}/token`, {
        method: 'POST',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify({ jwt_token_description: `round ${round} client ${client} #${i}`, jwt_token_life: '1 days' }),
        signal: AbortSignal.timeout(5_000),
      });
      const body = (await response.json()) as { jwt_token_id: string; jwt_token: string; code?: string };
      if (response.status !== 201) throw new Error(`unexpected ${response.status} ${JSON.stringify(body)}`);
      acknowledged.push({ id: body.jwt_token_id, token: body.jwt_token });
      progress.acks++;
    } catch (error) {
      // The connection dying is the point of the test; any other failure is a finding.
      if (error instanceof Error && error.message.startsWith('unexpected')) throw error;
      return acknowledged;
    }
  }
}

async function storedTokenIds(store: SharedStore): Promise<Set<string>> {
  if (store.kind === 'sqlite') {
    const db = new BetterSqlite3(store.databaseUrl, { readonly: true, fileMustExist: true });
    try {
      return new Set(db.prepare<[], { id: string }>('select id from tokens').all().map((r) => r.id));
    } finally {
      db.close();
    }
  }
  const client = await postgresClient(store);
  try {
    return new Set((await client.query<{ id: string }>('select id from tokens')).rows.map((r) => r.id));
  } finally {
    await client.end();
  }
}

/** Rows of the PSBT tables: status per txid, and how many coins each PSBT holds reserved. */
async function psbtRows(store: SharedStore): Promise<{ status: Map<string, string>; reserved: Map<string, number> }> {
  const query = async (text: string): Promise<Record<string, any>[]> => {
    if (store.kind === 'sqlite') {
      const db = new BetterSqlite3(store.databaseUrl, { readonly: true, fileMustExist: true });
      try {
        return db.prepare(text).all() as Record<string, any>[];
      } finally {
        db.close();
      }
    }
    const client = await postgresClient(store);
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const status = new Map((await query('select txid, status from psbts')).map((r) => [String(r.txid), String(r.status)]));
  const reserved = new Map((await query('select psbt_txid, count(*) as n from psbt_reservations group by psbt_txid')).map((r) => [String(r.psbt_txid), Number(r.n)]));
  return { status, reserved };
}

const stores: SharedStore[] = [];
afterAll(async () => {
  // After a timeout a case's own cleanup may not have run: no server outlives the file.
  await killStartedInstances();
  for (const store of stores) await store.dispose();
});

describe.each(['sqlite', 'postgres'] as const)('SIGKILL during writes (%s)', (kind) => {
  it(`loses no acknowledged write over ${ROUNDS} kills`, async () => {
    const store = await createSharedStore(kind);
    stores.push(store);
    const acknowledged: Acknowledged[] = [];
    let instance = await startInstance(store, 'crash', NO_LOGIN_LIMIT);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const progress: Progress = { acks: 0 };
        const clients = Array.from({ length: CLIENTS }, (_, c) => createTokensUntilKilled(instance, c, round, progress));
        await killAfterProgress(instance, progress);
        const answered = (await Promise.all(clients)).flat();
        expect(answered.length).toBeGreaterThan(0);
        acknowledged.push(...answered);

        if (kind === 'sqlite') expect(sqliteIntegrity(join(store.databaseUrl))).toBe('ok');
        const stored = await storedTokenIds(store);
        const lost = acknowledged.filter((a) => !stored.has(a.id));
        expect(lost).toEqual([]);
        instance = await startInstance(store, 'crash', NO_LOGIN_LIMIT);
      }
      // The restarted service accepts every acknowledged token.
      const sample = acknowledged.filter((_, i) => i % Math.max(1, Math.floor(acknowledged.length / 20)) === 0);
      for (const { token } of sample) {
        const response = await fetch(`${instance.api}/liveness`, { headers: { authorization: bearer(token) } });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
    } finally {
      await stopInstance(instance);
    }
  });
});

/**
 * What the clients know of each PSBT, by txid: created (201), deleted (200), or a deletion sent without
 * an answer (either). A creation without an answer may have been stored too: its txid is unknown, but it
 * is no known txid, since every creation pays a distinct amount.
 */
type PsbtState = 'created' | 'deleted' | 'delete_unanswered';

/** Creates and deletes PSBTs of w_wpkh until the server stops answering; any 5xx fails the test. */
async function psbtsUntilKilled(instance: Instance, auth: string, recipient: string, amounts: Iterator<number>, states: Map<string, PsbtState>, progress: Progress): Promise<void> {
  const call = async (path: string, init: RequestInit) => {
    const response = await fetch(`${instance.api}/wallets/w_wpkh/psbt${path}`, { ...init, headers: { authorization: auth, 'content-type': 'application/json' }, signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as any;
    if (response.status >= 500) {
      const logged = instance.output().split('\n').filter((l) => l.includes('"level":50')).slice(-1)[0] ?? '';
      throw new Error(`unexpected ${response.status} on ${init.method} ${path}: ${JSON.stringify(body)} ${logged.slice(0, 600)}`);
    }
    return { status: response.status, body };
  };
  for (;;) {
    try {
      const made = await call('', { method: 'POST', body: JSON.stringify({ recipients: [{ address: recipient, amount: amounts.next().value, unit: 'sat' }], fee_rate: '2' }) });
      if (made.status !== 201) {
        // Every coin is reserved by the other client's PSBT right now.
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const txid: string = made.body.result.tx.txid;
      states.set(txid, 'created');
      progress.acks++;
      states.set(txid, 'delete_unanswered');
      const gone = await call(`/${txid}`, { method: 'DELETE' });
      if (gone.status === 200) states.set(txid, 'deleted');
      else states.set(txid, 'created');
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('unexpected')) throw error;
      return;
    }
  }
}

describe.each(['sqlite', 'postgres'] as const)('SIGKILL during PSBT creation and deletion (%s)', (kind) => {
  it('keeps every answered creation and deletion, and never reserves a coin twice', async () => {
    const store = await createSharedStore(kind);
    stores.push(store);
    const node = await startRpcTestServer({ snapshot: 5 });
    const env = { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '0.5' };
    const recipient = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(61).address;
    let instance = await startInstance(store, 'psbt-crash', env);
    try {
      const auth = await adminImportsWpkh(instance.api, 'psbt crash', 'Crash');
      // Wait for exactly the tip's coins: a count alone is met at height 127 too, by two coins spent in
      // block 128, and a PSBT spending one of them rightly turns invalid once the sync applies that block.
      const coinKeys = (coins: { txid: string; vout: number }[]) => coins.map((c) => `${c.txid}:${c.vout}`).sort().join();
      const tipCoins = coinKeys(timeline.snapshots[5].expected.w_wpkh.unspent);
      for (let waited = 0; ; waited += 100) {
        const details = (await (await fetch(`${instance.api}/wallets/w_wpkh`, { headers: { authorization: auth } })).json()) as { utxo?: { txid: string; vout: number }[] };
        if (details.utxo && coinKeys(details.utxo) === tipCoins) break;
        if (waited > 20_000) throw new Error('wallet did not sync');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      const states = new Map<string, PsbtState>();
      // A distinct amount per creation (about 0.04 BTC, which any one coin pays): the same payment again would
      // give the same txid, and a deleted PSBT made again by an unanswered creation would look resurrected.
      const amounts = (function* () {
        for (let sat = 4_000_000; ; sat++) yield sat;
      })();
      let creations = 0;
      for (let round = 0; round < 4; round++) {
        const progress: Progress = { acks: 0 };
        const clients = [0, 1].map(() => psbtsUntilKilled(instance, auth, recipient, amounts, states, progress));
        await killAfterProgress(instance, progress);
        await Promise.all(clients);
        creations += progress.acks;
        if (kind === 'sqlite') expect(sqliteIntegrity(store.databaseUrl)).toBe('ok');
        instance = await startInstance(store, 'psbt-crash', env);
        const list = (await (await fetch(`${instance.api}/wallets/w_wpkh/psbt`, { headers: { authorization: auth } })).json()) as { result: Record<string, { tx: { vin: { txid: string; vout: number }[] } }> };
        const present = new Set(Object.keys(list.result));
        const rows = await psbtRows(store);
        const describe = (txid: string) => `${txid.slice(0, 8)} stored as ${rows.status.get(txid) ?? 'absent'} with ${rows.reserved.get(txid) ?? 0} reserved coins`;
        // Every pending PSBT holds all of its coins, and no reservation outlives its PSBT.
        for (const [txid, p] of Object.entries(list.result)) expect(rows.reserved.get(txid), describe(txid)).toBe(p.tx.vin.length);
        for (const txid of rows.reserved.keys()) expect(rows.status.get(txid), describe(txid)).toBe('pending');
        const known = [...states];
        expect(known.filter(([txid, state]) => state === 'created' && !present.has(txid)).map(([txid]) => describe(txid))).toEqual([]);
        expect(known.filter(([txid, state]) => state === 'deleted' && present.has(txid))).toEqual([]);
        // An unanswered deletion either happened or not; from here on the list is the truth.
        for (const [txid, state] of known) if (state === 'delete_unanswered') states.set(txid, present.has(txid) ? 'created' : 'deleted');
        // Free the coins held by PSBTs whose deletion went unanswered, for the next round.
        for (const txid of present) {
          const gone = await fetch(`${instance.api}/wallets/w_wpkh/psbt/${txid}`, { method: 'DELETE', headers: { authorization: auth } });
          expect(gone.status).toBe(200);
          await gone.arrayBuffer();
          states.set(txid, 'deleted');
        }
        const outpoints = Object.values(list.result).flatMap((p) => p.tx.vin.map((v) => `${v.txid}:${v.vout}`));
        expect(new Set(outpoints).size).toBe(outpoints.length);
      }
      expect(creations).toBeGreaterThanOrEqual(4);
      expect([...states.values()]).toContain('deleted');
    } finally {
      await stopInstance(instance);
      await node.close();
    }
  });
});
