/**
 * `wcs serve` answers on its port while the service still starts (api/early-listener.ts): liveness 200,
 * readiness 503, every other path 503 `starting`; then Fastify takes the same port and connections over.
 * The start is made to wait for real: a PostgreSQL transaction of the test holds the schema's
 * `schema_version` table locked, and the service's migrator reads that table before anything else.
 * (On SQLite the wait would be a busy-wait inside the synchronous driver: nothing could answer meanwhile.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, assertBuilt } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { parseAnswers, type RawAnswer } from '../support/raw-http.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../support/stores.js';

const KEY_A = 'early-listener-signing-key-0123456789abcdef';
const KEY_B = 'early-listener-other-signing-key-0123456789';
const STARTING = { message: 'The service is starting; try again shortly', code: 'starting' };

let schema: string;
let folder: string;
let databaseUrl: string;
let admin: pg.Client;
/** A JSON-RPC node from recorded answers: readiness needs a chain backend that answers. */
let node: RpcTestServer;
const started: Array<{ kill(signal: NodeJS.Signals): boolean; exitCode: number | null; signalCode: NodeJS.Signals | null }> = [];

beforeAll(async () => {
  assertBuilt();
  node = await startRpcTestServer({ snapshot: 0, auth: { user: 'rpcuser', password: 'rpc-password' } });
  schema = uniqueSchemaName();
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  // The migrator's own table, made ahead so the test can lock it (the migrator creates it only when missing).
  await admin.query(`create table "${schema}".schema_version (version integer primary key, name text not null, applied_at bigint not null)`);
  databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  folder = mkdtempSync(join(tmpdir(), 'wcs-early-'));
});
afterEach(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  await admin.end();
  await node.close();
  await dropPostgresSchema(schema);
  rmSync(folder, { recursive: true, force: true });
});

/** Holds the migrator back until `release` (a transaction with the table locked on a connection of its own). */
async function holdMigrations(): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table "${schema}".schema_version in access exclusive mode`);
  return { release: async () => void (await client.query('commit').finally(() => client.end())) };
}

function spawnServe(port: number, key: string, name: string) {
  const child = spawn(process.execPath, [CLI_PATH, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      SERVICE_DATA_FOLDER: join(folder, name),
      SERVICE_DATABASE_URL: databaseUrl,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: String(port),
      SERVICE_API_ACTIVE: 'True',
      SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
      SERVICE_JWT_KEY: key,
      SERVICE_LOG_LEVEL: 'info',
      SERVICE_NETWORK: 'regtest',
      SERVICE_BITCOIND_URL: node.url,
      SERVICE_BITCOIND_USER: 'rpcuser',
      SERVICE_BITCOIND_PASSWORD: 'rpc-password',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** A connection once the port accepts one (the process has just been spawned). */
async function connectWhenOpen(port: number, exited: Promise<unknown>): Promise<Socket> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error('the service exited before its port opened');
    const socket = await new Promise<Socket | undefined>((resolve) => {
      const attempt = connect(port, '127.0.0.1');
      attempt.once('connect', () => resolve(attempt));
      attempt.once('error', () => resolve(undefined));
    });
    if (socket) return socket;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One request on a kept-alive connection, and its answer. */
function ask(socket: Socket, text: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString();
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.off('data', onData);
      socket.off('error', reject);
      resolve(parseAnswers(received)[0]!);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(text);
  });
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

async function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const attempt = connect(port, '127.0.0.1');
    attempt.once('connect', () => (attempt.destroy(), resolve(false)));
    attempt.once('error', () => resolve(true));
  });
}

describe('wcs serve while the service starts', () => {
  it('answers the probes and 503 at once, then serves the routes on the same port and connection', async () => {
    const held = await holdMigrations();
    const port = await freePort();
    const serve = spawnServe(port, KEY_A, 'a');
    let released = false;
    try {
      const socket = await connectWhenOpen(port, serve.exited);
      const live = await ask(socket, get('/healthz/live'));
      expect(live.status).toBe(200);
      expect(JSON.parse(live.body)).toEqual({ status: 'ok' });
      expect(live.headers['x-content-type-options']).toBe('nosniff');
      expect(live.headers['content-security-policy']).toContain("default-src 'none'");

      const ready = await ask(socket, get('/healthz/ready'));
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toEqual({ status: 'unavailable' });

      const api = await ask(socket, get('/api/v1alpha/service'));
      expect(api.status).toBe(503);
      expect(JSON.parse(api.body)).toEqual(STARTING);
      expect(api.headers['retry-after']).toBe('1');
      expect(api.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(api.headers['x-frame-options']).toBe('DENY');
      expect(api.headers.connection).toBe('keep-alive');
      for (const leak of [schema, 'postgres', 'schema_version', '    at ']) expect(api.body).not.toContain(leak);

      // A request with a body is answered without reading it, and its connection closed.
      const other = await connectWhenOpen(port, serve.exited);
      const body = '{"jwt_token_description":"x"}';
      const posted = await ask(other, `POST /api/v1alpha/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      expect(posted.status).toBe(503);
      expect(JSON.parse(posted.body)).toEqual(STARTING);
      expect(posted.headers.connection).toBe('close');
      other.destroy();
      // Still starting: the store waits on the test's lock.
      expect(serve.stdout()).not.toContain('"service started"');

      await held.release();
      released = true;
      // From here on every attempt connects: any refused connection fails the test.
      let status = 0;
      while (status !== 200) {
        status = (await fetch(`http://127.0.0.1:${port}/healthz/ready`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 25));
      }
      // The connection opened while starting is Fastify's now.
      const readyAfter = await ask(socket, get('/healthz/ready'));
      expect(readyAfter.status).toBe(200);
      expect(JSON.parse(readyAfter.body)).toEqual({ status: 'ok' });
      const unauthenticated = await ask(socket, get('/api/v1alpha/liveness'));
      expect(unauthenticated.status).toBe(401);
      // Node's 417 for an unknown Expect is answered once, in the common shape (the early handler is gone).
      const expectation = await ask(socket, 'GET /healthz/live HTTP/1.1\r\nHost: localhost\r\nExpect: something\r\n\r\n');
      expect(expectation.status).toBe(417);
      expect(JSON.parse(expectation.body)).toMatchObject({ code: 'expectation_failed' });
      socket.destroy();

      const api1 = `http://127.0.0.1:${port}/api/v1alpha`;
      const made = await request(`${api1}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) }, json: { jwt_token_description: 'early', jwt_token_life: '1 hours' } });
      expect(made.status, made.text).toBe(201);
      const service = await request(`${api1}/service`, { headers: { authorization: bearer(made.body.jwt_token as string) } });
      expect(service.status).toBe(200);
      expect(service.body.config.database).toBe('postgres');

      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stdout()).toContain('"msg":"service stopped"');
      expect(await portRefuses(port)).toBe(true);
    } finally {
      if (!released) await held.release();
    }
  }, 60_000);

  it('a start that fails after the port opened exits as before the port opened, and frees the port', async () => {
    // The schema knows KEY_A's fingerprint now (the test above): another key is refused once the store is open.
    const held = await holdMigrations();
    const port = await freePort();
    const serve = spawnServe(port, KEY_B, 'b');
    let released = false;
    try {
      const socket = await connectWhenOpen(port, serve.exited);
      expect((await ask(socket, get('/healthz/live'))).status).toBe(200);
      await held.release();
      released = true;
      expect(await serve.exited).toBe(2);
      const lines = serve.stderr().split('\n').filter((l) => l.startsWith('wcs:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^wcs: The JWT signing key \(SERVICE_JWT_KEY, or the key file in the data folder\) differs from the key of the other instances on this database/);
      for (const leak of [KEY_A, KEY_B, '    at ']) expect(serve.stderr()).not.toContain(leak);
      expect(await portRefuses(port)).toBe(true);
    } finally {
      if (!released) await held.release();
    }
  }, 60_000);

  it('SIGTERM while starting closes the port and exits cleanly', async () => {
    const held = await holdMigrations();
    const port = await freePort();
    const serve = spawnServe(port, KEY_A, 'c');
    try {
      const socket = await connectWhenOpen(port, serve.exited);
      expect((await ask(socket, get('/healthz/ready'))).status).toBe(503);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stderr()).toContain('wcs: SIGTERM while starting; stopped');
      expect(serve.stdout()).not.toContain('"service started"');
      expect(await portRefuses(port)).toBe(true);
    } finally {
      await held.release();
    }
  }, 60_000);
});
