/**
 * Wiring: config -> store -> services -> HTTP server, built explicitly (no module singletons).
 * The CLI calls these; tests call them with their own config.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import { createLogger } from './api/logging.js';
import type { RouteModule } from './api/routes/index.js';
import { buildServer } from './api/server.js';
import { loadSigningKey } from './auth/signing-key.js';
import { BitcoindChainSource } from './chain/bitcoind/index.js';
import type { ChainSource } from './chain/types.js';
import type { Config } from './config.js';
import { createServices, type Services } from './services/index.js';
import { checkStoreNetwork } from './services/store-network.js';
import type { BootstrapResult } from './services/users.js';
import { openPostgresStore } from './store/postgres.js';
import type { Store } from './store/repositories.js';
import { openSqliteStore } from './store/sqlite.js';
import { PostgresSyncLeadership } from './store/sync-leadership.js';

export const INITIAL_ADMIN_PASSWORD_FILE = 'initial-admin-password';

/** The package version, read from package.json (one level above src/ and dist/). */
export function readVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

export function openStore(config: Config): Promise<Store> {
  return config.database.kind === 'postgres'
    ? openPostgresStore({ url: config.database.url })
    : openSqliteStore(config.database.path);
}

export interface Runtime {
  config: Config;
  store: Store;
  services: Services;
  version: string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Use this store instead of opening the configured one (tests with a PostgreSQL schema). */
  store?: Store;
  now?: () => number;
  /** Use this chain source instead of the configured Bitcoin Core (null: none). */
  chain?: ChainSource | null;
}

/** Bitcoin Core from the configuration, or null when no node is configured. */
export function openChainSource(config: Config): ChainSource | null {
  const { url, cookieFile, user, password } = config.bitcoind;
  if (url === undefined) return null;
  return new BitcoindChainSource({
    url,
    network: config.network,
    ...(user !== undefined && password !== undefined ? { user, password } : cookieFile !== undefined ? { cookieFile } : {}),
  });
}

/** Opens the store and builds every service; no HTTP. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  mkdirSync(config.dataFolder, { recursive: true, mode: 0o700 });
  const signingKey = loadSigningKey(config.dataFolder, config.jwtKey);
  const store = options.store ?? (await openStore(config));
  try {
    await checkStoreNetwork(store, config.network);
  } catch (error) {
    if (!options.store) await store.close();
    throw error;
  }
  const version = readVersion();
  const chain = options.chain !== undefined ? options.chain : openChainSource(config);
  const syncLeadership = config.database.kind === 'postgres' && options.store === undefined ? new PostgresSyncLeadership(config.database.url) : undefined;
  const services = createServices({
    config,
    store,
    signingKey,
    version,
    chain,
    ...(syncLeadership ? { syncLeadership } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return {
    config,
    store,
    services,
    version,
    close: async () => {
      await services.sync.stop();
      await chain?.close();
      await store.close();
    },
  };
}

export interface StartOptions extends RuntimeOptions {
  logger?: Logger;
  /** Where JSON log lines go (default stdout). */
  logDestination?: DestinationStream;
  /** Tells the operator something once, outside the log (the generated admin password). */
  announce?: (text: string) => void;
  routeModules?: readonly RouteModule[];
  /** Called with the runtime before the server is built: add readiness checks, hooks, routes. */
  extend?: (runtime: Runtime) => void | Promise<void>;
}

export interface RunningService {
  runtime: Runtime;
  server: FastifyInstance;
  logger: Logger;
  /** http://host:port of the listening server. */
  url: string;
  bootstrap: BootstrapResult;
  /** Stops accepting connections, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

/** Creates the first admin when no user exists; a generated password goes to a 0600 file and is announced once. */
export async function bootstrapAdmin(runtime: Runtime, announce: (text: string) => void): Promise<BootstrapResult> {
  const result = await runtime.services.users.bootstrapAdmin(runtime.config.adminPassword);
  if (result.created && result.generatedPassword !== undefined) {
    const path = join(runtime.config.dataFolder, INITIAL_ADMIN_PASSWORD_FILE);
    writeFileSync(path, `${result.generatedPassword}\n`, { mode: 0o600 });
    announce(
      `Created user "${result.userName}" with a generated password (shown once): ${result.generatedPassword}\n` +
        `It is also in ${path}; change it with: wcs user passwd ${result.userName}`,
    );
  }
  return result;
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? createLogger(config.logLevel, options.logDestination);
  const runtime = await createRuntime(config, options);
  let server: FastifyInstance | undefined;
  try {
    const bootstrap = await bootstrapAdmin(runtime, options.announce ?? ((text) => process.stderr.write(`${text}\n`)));
    await options.extend?.(runtime);
    server = await buildServer({ config, services: runtime.services, logger, version: runtime.version, routeModules: options.routeModules ?? [] });
    await server.listen({ host: config.host, port: config.port });
    if (config.syncIntervalMs > 0) runtime.services.sync.start(config.syncIntervalMs, (level, message, details) => logger[level](details ?? {}, message));
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const running = server;
    let closing: Promise<void> | undefined;
    logger.info({ host: config.host, port, apiActive: config.apiActive, database: config.database.kind, network: config.network }, 'service started');
    return {
      runtime,
      server: running,
      logger,
      url: `http://${host}:${port}`,
      bootstrap,
      close: () =>
        (closing ??= (async () => {
          await running.close();
          await runtime.close();
          logger.info('service stopped');
        })()),
    };
  } catch (error) {
    await server?.close().catch(() => {});
    await runtime.close();
    throw error;
  }
}
