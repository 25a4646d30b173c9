/**
 * Several real `wcs serve` processes on one store: a fresh PostgreSQL schema (through
 * SERVICE_DATABASE_URL, as an operator would configure it) or one SQLite file. Used by the
 * multi-instance and crash tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { startCliServer } from './cli.js';
import { TEST_ADMIN_PASSWORD } from './server.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from './stores.js';

/** Every instance signs and checks tokens with this key (instances must share it). */
export const SHARED_JWT_KEY = 'multi-instance-test-signing-key-0123456789abcdef';

export interface SharedStore {
  kind: 'sqlite' | 'postgres';
  /** The SERVICE_DATABASE_URL every instance gets (a file path for SQLite). */
  databaseUrl: string;
  /** Folder for data folders (and the SQLite file). */
  folder: string;
  dispose(): Promise<void>;
}

export async function createSharedStore(kind: 'sqlite' | 'postgres'): Promise<SharedStore> {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-instances-'));
  if (kind === 'sqlite') {
    return { kind, databaseUrl: join(folder, 'shared.sqlite'), folder, dispose: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  // A schema of its own, named in the URL's search_path as an operator would: the sync leadership is per
  // schema, so instances of other tests in the test database never hold this one's lock.
  const schema = uniqueSchemaName();
  await adminQuery(`create schema "${schema}"`);
  return {
    kind,
    databaseUrl: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    folder,
    async dispose() {
      await dropPostgresSchema(schema);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export type Instance = Awaited<ReturnType<typeof startCliServer>> & { api: string; name: string };

/** Every instance started and not yet seen exiting: killed by `killStartedInstances` after a timeout. */
const running = new Set<Instance>();

export async function killStartedInstances(): Promise<void> {
  await Promise.all([...running].map((instance) => killHard(instance)));
}

/** Starts `wcs serve` on the shared store with its own data folder and a free port. */
export async function startInstance(store: SharedStore, name: string, env: Record<string, string> = {}): Promise<Instance> {
  const dataFolder = join(store.folder, name);
  const server = await startCliServer({
    SERVICE_DATA_FOLDER: dataFolder,
    SERVICE_DATABASE_URL: store.databaseUrl,
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_API_ACTIVE: 'True',
    SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
    SERVICE_JWT_KEY: SHARED_JWT_KEY,
    SERVICE_LOG_LEVEL: 'info', // the start is detected by the "service started" line
    SERVICE_USER_REQUEST_RATE: '0', // tests send requests as fast as they can
    ...env,
  });
  const instance = { ...server, api: `${server.url}/api/v1alpha`, name };
  running.add(instance);
  void instance.exited.then(() => running.delete(instance));
  return instance;
}

/** SIGKILL (no cleanup at all) and wait for the exit. */
export async function killHard(instance: Instance): Promise<void> {
  if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGKILL');
  await instance.exited;
}

/** SIGTERM and wait; SIGKILL after `graceMs`. */
export async function stopInstance(instance: Instance, graceMs = 10_000): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), graceMs);
  await instance.exited;
  clearTimeout(timer);
}

/** A plain client of the shared PostgreSQL store's database. */
export async function postgresClient(store: SharedStore): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: store.databaseUrl });
  await client.connect();
  return client;
}

/** SQLite's own check of a store file ("ok" when sound), e.g. after an instance was killed writing it. */
export function sqliteIntegrity(path: string): string {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}
