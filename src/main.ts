/**
 * Wiring: config -> store -> services -> HTTP server, built explicitly (no module singletons).
 * The CLI calls these; tests call them with their own config.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import { createLogger } from './api/logging.js';
import type { RouteModule } from './api/routes/index.js';
import { findSigningKey, loadSigningKey } from './auth/signing-key.js';
import { BitcoindChainSource } from './chain/bitcoind/index.js';
import { createElectrumChainSource } from './chain/electrum/index.js';
import type { ChainSource } from './chain/types.js';
import type { Config } from './config.js';
import { listenError, type EarlyListener } from './api/early-listener.js';
import { readVersion } from './version.js';
import { prepareFixedBaseTable } from './core/keys/index.js';
import { createServices, type ServiceLog, type Services } from './services/index.js';
import { SigningKeyMismatchError, checkSigningKey, signingKeyFingerprint } from './services/signing-key-check.js';
import { checkStoreNetwork } from './services/store-network.js';
import { nextTurn } from './services/turns.js';
import type { BootstrapResult } from './services/users.js';
import { openPostgresStore } from './store/postgres.js';
import type { Store } from './store/repositories.js';
import { PRIVATE_FILE_MODE, ensurePrivateFolder } from './store/private-files.js';
import { openSqliteStore } from './store/sqlite.js';
import { PostgresSyncLeadership, SYNC_LOCK_ID } from './store/sync-leadership.js';

export { SigningKeyMismatchError };

export const INITIAL_ADMIN_PASSWORD_FILE = 'initial-admin-password';

/** Milliseconds between webhook delivery rounds (due times themselves follow the service clock). */
const WEBHOOK_ROUND_MS = 500;

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
  /** Identifies the JWT signing key without revealing it (see services/signing-key-check.ts). */
  signingKeyFingerprint: string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Use this store instead of opening the configured one (tests with a PostgreSQL schema). */
  store?: Store;
  now?: () => number;
  /** Use this chain source instead of the configured Bitcoin Core (null: none). */
  chain?: ChainSource | null;
  /** Where the chain source and the background work (sync, webhook delivery) report what an operator should know. */
  log?: ServiceLog;
  /**
   * Create nothing in the data folder (the commands other than `serve`): they issue and check no token, so a
   * JWT signing key not made yet stays unmade and an in-memory one stands in.
   */
  createNoFiles?: boolean;
}

/** The configured chain source: an Electrum server, or Bitcoin Core; null when neither is configured. */
export function openChainSource(config: Config, log?: ServiceLog): ChainSource | null {
  const electrum = config.electrum;
  if (electrum.url !== undefined) {
    return createElectrumChainSource({
      url: electrum.url,
      network: config.network,
      ...(electrum.tlsFingerprint !== undefined ? { tlsFingerprint: electrum.tlsFingerprint } : {}),
      ...(electrum.proxy !== undefined ? { proxy: electrum.proxy } : {}),
      ...(log ? { log } : {}),
    });
  }
  const { url, cookieFile, user, password, blocksFolder } = config.bitcoind;
  if (url === undefined) return null;
  return new BitcoindChainSource({
    url,
    network: config.network,
    blocksFolder,
    log,
    ...(user !== undefined && password !== undefined ? { user, password } : cookieFile !== undefined ? { cookieFile } : {}),
  });
}

/** Opens the store and builds every service; no HTTP. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  let signingKey: Uint8Array;
  if (options.createNoFiles) signingKey = findSigningKey(config.dataFolder, config.jwtKey) ?? new Uint8Array(randomBytes(32));
  else {
    ensurePrivateFolder(config.dataFolder);
    signingKey = loadSigningKey(config.dataFolder, config.jwtKey);
  }
  const store = options.store ?? (await openStore(config));
  try {
    await checkStoreNetwork(store, config.network);
  } catch (error) {
    if (!options.store) await store.close();
    throw error;
  }
  const version = readVersion();
  const chain = options.chain !== undefined ? options.chain : openChainSource(config, options.log);
  const syncLeadership = config.database.kind === 'postgres' && options.store === undefined ? new PostgresSyncLeadership(config.database.url, SYNC_LOCK_ID, config.syncSharing) : undefined;
  const services = createServices({
    config,
    store,
    signingKey,
    version,
    chain,
    ...(syncLeadership ? { syncLeadership } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    config,
    store,
    services,
    version,
    signingKeyFingerprint: signingKeyFingerprint(signingKey),
    close: async () => {
      await services.webhookDeliverer.stop();
      services.wallets.states.stop();
      await services.sync.stop();
      // After the sync, whose last pass may still wait on it; a derivation waiting then is done in process.
      await services.gapDerivation?.stop();
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
  /** The configured JWT signing key replaces the one the database knows (`wcs serve --replace-jwt-key`). */
  replaceSigningKey?: boolean;
  /** Called with the runtime before the server is built: add readiness checks, hooks, routes. */
  extend?: (runtime: Runtime) => void | Promise<void>;
  /**
   * The port already listens and answers while the service starts (`wcs serve`, api/early-listener.ts); Fastify
   * takes that server over. Without it the port is bound once built, after a probe that refuses a bad host or port early.
   */
  earlyListener?: EarlyListener;
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
    writeFileSync(path, `${result.generatedPassword}\n`, { mode: PRIVATE_FILE_MODE });
    // A file left from an earlier store keeps its old mode through writeFileSync.
    chmodSync(path, PRIVATE_FILE_MODE);
    announce(
      `Created user "${result.userName}" with a generated password (shown once): ${result.generatedPassword}\n` +
        `It is also in ${path}; change it with: npx wcs user passwd ${result.userName}${dataFolderOption(runtime.config)}`,
    );
  }
  return result;
}

/** ` --data-folder DIR` when the data folder is not the default one: what a `wcs` command needs to find the store. */
export function dataFolderOption(config: Config): string {
  if (config.dataFolder === resolve(homedir(), '.wcs')) return '';
  return ` --data-folder ${/^[\w./~:@%+=,-]+$/.test(config.dataFolder) ? config.dataFolder : `'${config.dataFolder.replaceAll("'", "'\\''")}'`}`;
}

/** Binds host:port once and lets go: a host or port that cannot work is refused before anything is created. */
async function probeListen(config: Config): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', (error) => reject(listenError(error, config)));
    probe.listen({ host: config.host, port: config.port }, () => probe.close(() => resolve()));
  });
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? createLogger(config.logLevel, options.logDestination);
  const { earlyListener } = options;
  if (!earlyListener) await probeListen(config);
  const log: ServiceLog = (level, message, details) => logger[level](details ?? {}, message);
  const runtime = await createRuntime(config, { ...options, log });
  // Turns around the longer synchronous steps: an early listener answers its probes between them.
  await nextTurn();
  // Key derivation's table of multiples of G, built before serving: the first wallet's scan would pay for it.
  prepareFixedBaseTable();
  await nextTurn();
  let server: FastifyInstance | undefined;
  try {
    const { replaced } = await checkSigningKey(runtime.store, runtime.signingKeyFingerprint, { replace: options.replaceSigningKey === true });
    if (replaced) logger.warn('the JWT signing key replaced the one this database knew: tokens issued before stop working');
    const bootstrap = await bootstrapAdmin(runtime, options.announce ?? ((text) => process.stderr.write(`${text}\n`)));
    await options.extend?.(runtime);
    // Imported here, not at the top: CLI commands use createRuntime alone, and the HTTP server's modules
    // (Fastify, the OpenAPI document, the web interface) were half of each command's start.
    const { buildServer } = await import('./api/server.js');
    server = await buildServer({ config, services: runtime.services, logger, version: runtime.version, routeModules: options.routeModules ?? [], ...(earlyListener ? { earlyListener } : {}) });
    // With an early listener this binds nothing: Fastify's requests start arriving there.
    try {
      await server.listen({ host: config.host, port: config.port });
    } catch (error) {
      throw listenError(error, config);
    }
    if (config.syncIntervalMs > 0) runtime.services.sync.start(config.syncIntervalMs);
    runtime.services.webhookDeliverer.start(WEBHOOK_ROUND_MS);
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
