/**
 * kill -9 a real `wcs serve` process at a random moment while clients create tokens, in a bounded
 * loop, on SQLite and on PostgreSQL. After each kill the store opens (the service restarts on it),
 * passes an integrity check, and holds every token whose creation was answered 201.
 */
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer } from '../support/server.js';
import { createSharedStore, killHard, postgresClient, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';

const ROUNDS = 5;
const CLIENTS = 4;
const admin = basicAuth('admin', TEST_ADMIN_PASSWORD);

interface Acknowledged {
  id: string;
  token: string;
}

/** Creates tokens until the server stops answering; returns those answered 201. */
async function createTokensUntilKilled(instance: Instance, client: number, round: number): Promise<Acknowledged[]> {
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
    } catch (error) {
      // The connection dying is the point of the test; any other failure is a finding.
      if (error instanceof Error && error.message.startsWith('unexpected')) throw error;
      return acknowledged;
    }
  }
}

function sqliteIntegrity(path: string): string {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
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
  const client = await postgresClient(store.schema ?? '');
  try {
    return new Set((await client.query<{ id: string }>('select id from tokens')).rows.map((r) => r.id));
  } finally {
    await client.end();
  }
}

const stores: SharedStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.dispose();
});

describe.each(['sqlite', 'postgres'] as const)('SIGKILL during writes (%s)', (kind) => {
  it(`loses no acknowledged write over ${ROUNDS} kills`, async () => {
    const store = await createSharedStore(kind);
    stores.push(store);
    const acknowledged: Acknowledged[] = [];
    let instance = await startInstance(store, 'crash');
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const clients = Array.from({ length: CLIENTS }, (_, c) => createTokensUntilKilled(instance, c, round));
        // A random moment, after some writes have been acknowledged.
        await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
        await killHard(instance);
        const answered = (await Promise.all(clients)).flat();
        expect(answered.length).toBeGreaterThan(0);
        acknowledged.push(...answered);

        if (kind === 'sqlite') expect(sqliteIntegrity(join(store.databaseUrl))).toBe('ok');
        const stored = await storedTokenIds(store);
        const lost = acknowledged.filter((a) => !stored.has(a.id));
        expect(lost).toEqual([]);
        instance = await startInstance(store, 'crash');
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
