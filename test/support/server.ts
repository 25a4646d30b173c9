/**
 * Starts the real service in-process on 127.0.0.1 with a free port, a fresh data folder and a
 * real SQLite file (or a fresh PostgreSQL schema), and captures its log lines. Other parts of the
 * test suite reuse it: pass env/flags, a `configure` function, extra route modules or `extend`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { DestinationStream } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { openEarlyListener } from '../../src/api/early-listener.js';
import { startService, type RunningService, type StartOptions } from '../../src/main.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from './stores.js';

export const TEST_ADMIN_PASSWORD = 'correct horse battery staple';

export interface TestServerOptions {
  /** Reuse a data folder (restart tests); default: a fresh temporary one. */
  dataFolder?: string;
  /** SERVICE_* variables on top of the test defaults (API active, port 0, admin password). */
  env?: Record<string, string>;
  flags?: string[];
  /** Last word on the config, after env and flags. */
  configure?: (config: Config) => Config;
  /** `postgres`: a fresh schema in the test PostgreSQL instead of the SQLite file. */
  database?: 'sqlite' | 'postgres';
  /** Reuse a PostgreSQL schema (restart tests). */
  postgresSchema?: string;
  routeModules?: StartOptions['routeModules'];
  extend?: StartOptions['extend'];
  now?: () => number;
  /** Listen first with the early listener and let Fastify take its server over, as `wcs serve` does. */
  earlyListener?: boolean;
}

export interface TestServer {
  url: string;
  /** `url` + `/api/v1alpha`. */
  api: string;
  dataFolder: string;
  postgresSchema: string | undefined;
  config: Config;
  adminPassword: string;
  running: RunningService;
  /** Every JSON log line written so far. */
  logs: string[];
  /** Messages shown to the operator outside the log (generated admin password). */
  announcements: string[];
  /** What the first-start admin bootstrap did on this start. */
  bootstrap(): RunningService['bootstrap'];
  /** Stops the server (graceful) but keeps data folder and schema. */
  stop(): Promise<void>;
  /** Stops and removes the data folder and schema. */
  dispose(): Promise<void>;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataFolder = options.dataFolder ?? mkdtempSync(join(tmpdir(), 'wcs-test-'));
  let config = loadConfig({
    env: {
      SERVICE_DATA_FOLDER: dataFolder,
      SERVICE_PORT: '0',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_API_ACTIVE: 'True',
      SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
      SERVICE_LOG_LEVEL: 'info',
      ...options.env,
    },
    flags: options.flags ?? [],
  });
  if (options.configure) config = options.configure(config);

  const postgresSchema = options.database === 'postgres' ? (options.postgresSchema ?? uniqueSchemaName()) : undefined;
  const store = postgresSchema ? await openPostgresStore({ url: TEST_DATABASE_URL, schema: postgresSchema, maxConnections: 4 }) : undefined;

  const logs: string[] = [];
  const announcements: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void logs.push(line) };
  const earlyListener = options.earlyListener ? await openEarlyListener(config) : undefined;
  const running = await startService(config, {
    ...(earlyListener ? { earlyListener } : {}),
    logDestination: destination,
    announce: (text) => announcements.push(text),
    ...(store ? { store } : {}),
    ...(options.routeModules ? { routeModules: options.routeModules } : {}),
    ...(options.extend ? { extend: options.extend } : {}),
    ...(options.now ? { now: options.now } : {}),
  }).catch(async (error: unknown) => {
    await earlyListener?.close();
    throw error;
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.close();
  };
  return {
    url: running.url,
    api: `${running.url}/api/v1alpha`,
    dataFolder,
    postgresSchema,
    config,
    adminPassword: config.adminPassword ?? '',
    running,
    logs,
    announcements,
    bootstrap: () => running.bootstrap,
    stop,
    async dispose() {
      await stop();
      if (postgresSchema) await dropPostgresSchema(postgresSchema);
      if (!options.dataFolder) rmSync(dataFolder, { recursive: true, force: true });
    },
  };
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** fetch, returning the parsed JSON body (or undefined) alongside status and headers. */
export async function request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<JsonResponse> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(url, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** Creates a token as `user` and returns the creation response body. */
export async function createToken(server: TestServer, user: string, password: string, description: string, life = '1 days'): Promise<any> {
  const response = await request(`${server.api}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(user, password) },
    json: { jwt_token_description: description, jwt_token_life: life },
  });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`);
  return response.body;
}

/** Runs statements (`?` placeholders) on a stopped server's database: its SQLite file, or its PostgreSQL schema. */
export async function onStoppedServersDatabase(server: TestServer, statements: Array<[string, unknown[]]>): Promise<void> {
  if (server.postgresSchema) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`set search_path to "${server.postgresSchema}"`);
      for (const [sql, params] of statements) {
        let n = 0;
        await client.query(sql.replace(/\?/g, () => `$${++n}`), params);
      }
    } finally {
      await client.end();
    }
    return;
  }
  const db = new BetterSqlite3(join(server.dataFolder, 'service.sqlite'));
  try {
    for (const [sql, params] of statements) db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** Asks the server's readiness every 100 ms until it answers 200 (at most a minute); its last status. */
export async function readinessOnceReady(server: TestServer): Promise<number> {
  let status = 0;
  for (let attempt = 0; attempt < 600 && status !== 200; attempt++) {
    status = (await request(`${server.url}/healthz/ready`)).status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}
