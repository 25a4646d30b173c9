/**
 * The service's one typed configuration, built from command-line flags, `SERVICE_*` environment
 * variables and an optional `config.json` in the data folder (in that order of precedence), over
 * defaults. Every setting is declared once in SETTINGS; a bad value stops the start with one line
 * naming the setting.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseDuration } from './auth/duration.js';
import { ELECTRUM_SETTINGS, NO_ELECTRUM, chainSettingsConflict, chainSettingsReplaced, type ElectrumConfig } from './chain-settings.js';
import { NETWORK_NAMES, type NetworkName } from './core/network.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type DatabaseConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface Config {
  dataFolder: string;
  host: string;
  port: number;
  database: DatabaseConfig;
  apiActive: boolean;
  /** Password of the `admin` user created on first start; secret. */
  adminPassword: string | undefined;
  network: NetworkName;
  bitcoind: {
    url: string | undefined;
    cookieFile: string | undefined;
    user: string | undefined;
    password: string | undefined;
    /** The node's `blocks` folder, read while the node keeps no block filters (scans read blocks from its files). */
    blocksFolder: string | undefined;
  };
  /** An Electrum server as the chain source instead of Bitcoin Core (src/chain-settings.ts). */
  electrum: ElectrumConfig;
  /** Highest fee rate a PSBT may use, sat/vB. */
  maxFeeRate: number;
  /** Most pending PSBTs one wallet may hold (each reserves coins until it settles or is deleted). */
  maxPendingPsbts: number;
  /** Miniscript wallets: a coin whose recovery path opens within this many blocks is flagged (and can be refreshed). */
  timelockWarningBlocks: number;
  /** Wallet states the reads keep loaded; past it the least recently read is dropped (and loaded again when read). */
  walletStatesKept: number;
  tokenMaxLifeSeconds: number;
  auth: { passwordMinChars: number; rateLimit: number; registrationLinkTimeoutHours: number };
  logLevel: LogLevel;
  /** HS256 signing key given by the operator (at least 32 bytes); secret. Absent: a key file in the data folder. */
  jwtKey: string | undefined;
  /** Origins allowed by CORS; empty: CORS off. */
  corsOrigins: string[];
  /** Milliseconds between chain sync passes; 0: no background sync (passes run only on demand). */
  syncIntervalMs: number;
  /**
   * PostgreSQL: the instances share the following of wallets through per-wallet leases (ADR 0014), instead of one
   * instance following them all; `syncLeaseMs` is how long a silent instance keeps its wallets.
   */
  syncSharing: boolean;
  syncLeaseMs: number;
  /** What one user may cost the service (docs/operations.md, "Cost limits"). */
  limits: CostLimits;
  /** Serve the web interface at `/` (independent of the API). */
  webActive: boolean;
  /** Depth (besides 1) at which `transaction.confirmed` is recorded. */
  confirmationsNotify: number;
  /** Webhooks may deliver to loopback and private addresses (never to link-local or metadata ones). */
  webhookAllowPrivate: boolean;
  /**
   * Addresses (or CIDR ranges) of the reverse proxies in front of the service, whose `X-Forwarded-For`
   * and `X-Forwarded-Proto` are believed; empty: none, every request comes from its peer.
   */
  trustProxy: string[];
}

export interface CostLimits {
  /** Requests of one user served at once by each instance; the user's next ones wait in line. */
  userRequestsInFlight: number;
  /** Requests of one user that may wait in line on each instance; one more answers 429. */
  userRequestQueue: number;
  /** Milliseconds a request may wait in its user's line before it answers 429. */
  userRequestQueueTimeoutMs: number;
  /** Event streams one user may hold open on each instance. */
  userEventStreams: number;
  /** Optional hard cap: requests per second per user and instance (token bucket refill); 0: off (the default). */
  userRequestRate: number;
  /** Bucket size of the hard cap. */
  userRequestBurst: number;
  /** Wallets one user may own. */
  maxWalletsPerUser: number;
  /** Highest `gap_limit` of a new wallet. */
  maxGapLimit: number;
  /** Highest `count` of one page of `GET /wallets/{alias}/addresses`. */
  addressPageMax: number;
  /** Milliseconds a request (headers and body) may take to arrive; the connection is closed after it. */
  requestTimeoutMs: number;
}

/** `scheme://user:password@host` -> `scheme://[redacted]@host`, wherever an address appears in `text`. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s"']*@/gi, '$1[redacted]@');
}

/** A setting that cannot be used; `message` is one line naming the setting, with no credentials in it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(redactCredentials(message));
    this.name = 'ConfigError';
  }
}

/** `blocksFolderOff`: `bitcoind_blocks_folder` is `none`, so no folder is looked for beside the cookie. */
export type Draft = Omit<Config, 'database' | 'dataFolder'> & { databaseUrl: string | undefined; blocksFolderOff: boolean };

export interface Setting {
  /** Key in config.json. */
  key: string;
  env: string;
  flag: string;
  description: string;
  defaultText: string;
  secret?: boolean;
  apply(draft: Draft, text: string): void;
}

const TRUE_WORDS = ['true', '1', 'yes'];
const FALSE_WORDS = ['false', '0', 'no', ''];

function integer(text: string, min: number, max: number): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new Error(`must be a whole number from ${min} to ${max}`);
  const value = Number(text);
  if (value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}`);
  return value;
}

function oneOf<T extends string>(text: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === text.trim().toLowerCase());
  if (!found) throw new Error(`must be one of ${allowed.join(', ')}`);
  return found;
}

// Labels of letters, digits, '-' and '_' (container service names use '_'); whether the name resolves to an
// address of this machine is found out when the service binds it.
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** An IPv4 or IPv6 address (brackets allowed) or a host name; not a URL, not a port. */
function hostAddress(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error('must not be empty');
  const unbracketed = /^\[.*\]$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  if (isIP(unbracketed) !== 0) return unbracketed;
  if (HOST_NAME.test(trimmed) && !/^[0-9.]+$/.test(trimmed)) return trimmed;
  throw new Error('must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or a host name, without scheme or port');
}

/** Comma-separated IP addresses or CIDR ranges (`10.0.0.0/8`, `fd00::/8`); empty: none. */
function addressesOrRanges(text: string): string[] {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const version = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (version === 0 || !prefixOk || rest.length > 0) throw new Error(`"${entry}" is not an IP address or a range like 10.0.0.0/8`);
  }
  return entries;
}

function optionalText(text: string): string | undefined {
  return text.trim() === '' ? undefined : text.trim();
}

export const SETTINGS: readonly Setting[] = [
  { key: 'host', env: 'SERVICE_HOST', flag: '--host', defaultText: '127.0.0.1', description: 'Address the HTTP server listens on.',
    apply: (d, t) => { d.host = hostAddress(t); } },
  { key: 'port', env: 'SERVICE_PORT', flag: '--port', defaultText: '25441', description: 'TCP port of the HTTP server (0: any free port).',
    apply: (d, t) => { d.port = integer(t, 0, 65535); } },
  { key: 'database_url', env: 'SERVICE_DATABASE_URL', flag: '--database', defaultText: '`<data_folder>/service.sqlite`', description: 'A SQLite file path (or `sqlite:<path>`), or `postgres://user:password@host:port/database`.', secret: true,
    apply: (d, t) => { d.databaseUrl = optionalText(t); } },
  { key: 'api_active', env: 'SERVICE_API_ACTIVE', flag: '--api-active', defaultText: 'False', description: 'Serve the REST API under `/api` (`True`, `true`, `1`, `yes`); otherwise every `/api` path is 404.',
    apply: (d, t) => {
      const word = t.trim().toLowerCase();
      if (TRUE_WORDS.includes(word)) d.apiActive = true;
      else if (FALSE_WORDS.includes(word)) d.apiActive = false;
      else throw new Error('must be True or False');
    } },
  { key: 'admin_password', env: 'SERVICE_ADMIN_PASSWORD', flag: '--admin-password', defaultText: 'random, printed once', description: 'Password of the `admin` user created on first start (when no user exists).', secret: true,
    apply: (d, t) => { d.adminPassword = t === '' ? undefined : t; } },
  { key: 'network', env: 'SERVICE_NETWORK', flag: '--network', defaultText: 'mainnet', description: 'Bitcoin network: mainnet, testnet, testnet4, signet or regtest.',
    apply: (d, t) => { d.network = oneOf(t, NETWORK_NAMES); } },
  { key: 'bitcoind_url', env: 'SERVICE_BITCOIND_URL', flag: '--bitcoind-url', defaultText: 'none', description: 'JSON-RPC address of Bitcoin Core, e.g. `http://127.0.0.1:8332`. Give this or `electrum_url`, not both.',
    apply: (d, t) => {
      const url = optionalText(t);
      if (url !== undefined && !/^https?:\/\/[^\s]+$/i.test(url)) throw new Error('must be an http:// or https:// address');
      d.bitcoind.url = url;
    } },
  { key: 'bitcoind_cookie', env: 'SERVICE_BITCOIND_COOKIE', flag: '--bitcoind-cookie', defaultText: 'none', description: 'Path of Bitcoin Core\'s `.cookie` file (cookie authentication).',
    apply: (d, t) => { d.bitcoind.cookieFile = optionalText(t); } },
  { key: 'bitcoind_user', env: 'SERVICE_BITCOIND_USER', flag: '--bitcoind-user', defaultText: 'none', description: 'JSON-RPC user name (instead of the cookie).',
    apply: (d, t) => { d.bitcoind.user = optionalText(t); } },
  { key: 'bitcoind_password', env: 'SERVICE_BITCOIND_PASSWORD', flag: '--bitcoind-password', defaultText: 'none', description: 'JSON-RPC password.', secret: true,
    apply: (d, t) => { d.bitcoind.password = t === '' ? undefined : t; } },
  { key: 'bitcoind_blocks_folder', env: 'SERVICE_BITCOIND_BLOCKS_FOLDER', flag: '--bitcoind-blocks-folder', defaultText: 'the `blocks` folder beside `bitcoind_cookie`, if there is one with block files', description: 'Bitcoin Core\'s `blocks` folder (e.g. `~/.bitcoin/blocks`), when the service may read it: while the node keeps no block filters (`-blockfilterindex`), scans read blocks from its files instead of over JSON-RPC. `none`: never read the node\'s files.',
    apply: (d, t) => {
      d.blocksFolderOff = t.trim().toLowerCase() === 'none';
      d.bitcoind.blocksFolder = d.blocksFolderOff ? undefined : existingFolder(t);
    } },
  ...ELECTRUM_SETTINGS,
  { key: 'max_fee_rate', env: 'SERVICE_MAX_FEE_RATE', flag: '--max-fee-rate', defaultText: '1000', description: 'Highest fee rate a PSBT may use, in sat/vB.',
    apply: (d, t) => { d.maxFeeRate = integer(t, 1, 1_000_000); } },
  { key: 'max_pending_psbts', env: 'SERVICE_MAX_PENDING_PSBTS', flag: '--max-pending-psbts', defaultText: '100', description: 'Most pending PSBTs a wallet may hold; one more is refused with 422 `too_many_pending_psbts` until one is deleted or settles.',
    apply: (d, t) => { d.maxPendingPsbts = integer(t, 1, 100_000); } },
  { key: 'timelock_warning_blocks', env: 'SERVICE_TIMELOCK_WARNING_BLOCKS', flag: '--timelock-warning-blocks', defaultText: '4320', description: 'Miniscript wallets: a coin whose timelocked recovery path opens within this many blocks (4320: about 30 days) is listed in the wallet\'s `timelock_expiring` and can be spent back to the wallet by a `refresh` PSBT.',
    apply: (d, t) => { d.timelockWarningBlocks = integer(t, 1, 1_000_000); } },
  { key: 'token_max_life', env: 'SERVICE_TOKEN_MAX_LIFE', flag: '--token-max-life', defaultText: '365 days', description: 'Longest `jwt_token_life` a token may ask for (duration text).',
    apply: (d, t) => {
      const parsed = parseDuration(t, 100 * 365 * 86_400);
      if (!parsed.ok) throw new Error(parsed.reason);
      d.tokenMaxLifeSeconds = parsed.seconds;
    } },
  { key: 'password_min_chars', env: 'SERVICE_PASSWORD_MIN_CHARS', flag: '--password-min-chars', defaultText: '8', description: 'Minimum length of user passwords.',
    apply: (d, t) => { d.auth.passwordMinChars = integer(t, 1, 1024); } },
  { key: 'rate_limit', env: 'SERVICE_RATE_LIMIT', flag: '--rate-limit', defaultText: '10', description: 'Failed BasicAuth attempts allowed per minute for one user name from one client address (five times as many per address over all names); more give 429.',
    apply: (d, t) => { d.auth.rateLimit = integer(t, 1, 1_000_000); } },
  { key: 'registration_link_timeout', env: 'SERVICE_REGISTRATION_LINK_TIMEOUT', flag: '--registration-link-timeout', defaultText: '1', description: 'Hours a user-invitation link stays valid.',
    apply: (d, t) => { d.auth.registrationLinkTimeoutHours = integer(t, 1, 8760); } },
  { key: 'log_level', env: 'SERVICE_LOG_LEVEL', flag: '--log-level', defaultText: 'info', description: 'fatal, error, warn, info, debug, trace or silent.',
    apply: (d, t) => { d.logLevel = oneOf(t, LOG_LEVELS); } },
  { key: 'jwt_key', env: 'SERVICE_JWT_KEY', flag: '--jwt-key', defaultText: 'random key in `<data_folder>/jwt-signing-key`', description: 'HS256 signing key for tokens, at least 32 characters. Changing it invalidates every token.', secret: true,
    apply: (d, t) => {
      if (t === '') { d.jwtKey = undefined; return; }
      if (Buffer.byteLength(t, 'utf8') < 32) throw new Error('must be at least 32 characters');
      d.jwtKey = t;
    } },
  { key: 'cors_origins', env: 'SERVICE_CORS_ORIGINS', flag: '--cors-origins', defaultText: 'none (CORS off)', description: 'Comma-separated origins allowed to call the API from a browser, e.g. `https://app.example`.',
    apply: (d, t) => {
      const origins = t.split(',').map((o) => o.trim()).filter((o) => o !== '');
      for (const origin of origins) {
        if (!/^https?:\/\/[^/\s]+$/i.test(origin)) throw new Error(`"${origin}" is not an origin like https://app.example`);
      }
      d.corsOrigins = origins;
    } },
  { key: 'sync_interval', env: 'SERVICE_SYNC_INTERVAL', flag: '--sync-interval', defaultText: '5', description: 'Seconds between chain sync passes (new blocks, mempool); decimals allowed; 0 turns the background sync off.',
    apply: (d, t) => {
      const seconds = Number(t.trim());
      if (t.trim() === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > 86_400) throw new Error('must be a number of seconds from 0 to 86400');
      d.syncIntervalMs = Math.round(seconds * 1000);
    } },
  { key: 'sync_sharing', env: 'SERVICE_SYNC_SHARING', flag: '--sync-sharing', defaultText: 'off', description: 'PostgreSQL with several instances: `on` shares the following of wallets between the instances that sync (each wallet followed by one of them, taken over when it stops), `off` lets one instance follow every wallet. Set it alike on every instance.',
    apply: (d, t) => {
      const word = t.trim().toLowerCase();
      if (word === 'on') d.syncSharing = true;
      else if (word === 'off') d.syncSharing = false;
      else throw new Error('must be on or off');
    } },
  { key: 'sync_lease', env: 'SERVICE_SYNC_LEASE', flag: '--sync-lease', defaultText: '15', description: 'With `sync_sharing` on: seconds after which the wallets of an instance that stopped renewing its leases (killed, hung, cut off from the database) are taken over by the others.',
    apply: (d, t) => { d.syncLeaseMs = integer(t, 3, 3600) * 1000; } },
  { key: 'user_requests_in_flight', env: 'SERVICE_USER_REQUESTS_IN_FLIGHT', flag: '--user-requests-in-flight', defaultText: '4', description: 'API requests of one user that each instance serves at once; the user\'s further requests wait in line, first come first served (event streams do not count).',
    apply: (d, t) => { d.limits.userRequestsInFlight = integer(t, 1, 10_000); } },
  { key: 'user_request_queue', env: 'SERVICE_USER_REQUEST_QUEUE', flag: '--user-request-queue', defaultText: '64', description: 'API requests of one user that may wait in line on each instance; one more answers 429 `too_many_requests` with `Retry-After`.',
    apply: (d, t) => { d.limits.userRequestQueue = integer(t, 0, 100_000); } },
  { key: 'user_request_queue_timeout', env: 'SERVICE_USER_REQUEST_QUEUE_TIMEOUT', flag: '--user-request-queue-timeout', defaultText: '10', description: 'Seconds a request may wait in its user\'s line; then it answers 429 `too_many_requests` with `Retry-After`.',
    apply: (d, t) => { d.limits.userRequestQueueTimeoutMs = integer(t, 1, 3600) * 1000; } },
  { key: 'user_event_streams', env: 'SERVICE_USER_EVENT_STREAMS', flag: '--user-event-streams', defaultText: '8', description: 'Event streams (`GET /events`) one user may hold open on each instance; one more answers 429 `too_many_requests`.',
    apply: (d, t) => { d.limits.userEventStreams = integer(t, 1, 10_000); } },
  { key: 'user_request_rate', env: 'SERVICE_USER_REQUEST_RATE', flag: '--user-request-rate', defaultText: '0 (off)', description: 'Optional hard cap: requests per second each user may make, per instance (a token bucket; more answer 429 `too_many_requests` with `Retry-After`, even one at a time); 0: no cap.',
    apply: (d, t) => { d.limits.userRequestRate = integer(t, 0, 1_000_000); } },
  { key: 'user_request_burst', env: 'SERVICE_USER_REQUEST_BURST', flag: '--user-request-burst', defaultText: '20', description: 'Bucket size of the `user_request_rate` cap: requests a user may make at once before the cap applies.',
    apply: (d, t) => { d.limits.userRequestBurst = integer(t, 1, 1_000_000); } },
  { key: 'max_wallets_per_user', env: 'SERVICE_MAX_WALLETS_PER_USER', flag: '--max-wallets-per-user', defaultText: '50', description: 'Wallets one user may own; one more answers 422 `too_many_wallets`.',
    apply: (d, t) => { d.limits.maxWalletsPerUser = integer(t, 1, 1_000_000); } },
  { key: 'max_gap_limit', env: 'SERVICE_MAX_GAP_LIMIT', flag: '--max-gap-limit', defaultText: '200', description: 'Highest `gap_limit` of a wallet, new or raised by its owner (at most 1000); more answers 422 `gap_limit_too_high`.',
    apply: (d, t) => { d.limits.maxGapLimit = integer(t, 1, 1000); } },
  { key: 'address_page_max', env: 'SERVICE_ADDRESS_PAGE_MAX', flag: '--address-page-max', defaultText: '100', description: 'Highest `count` of one page of a wallet\'s addresses (at most 1000); more answers 400 naming `count`.',
    apply: (d, t) => { d.limits.addressPageMax = integer(t, 1, 1000); } },
  { key: 'request_timeout', env: 'SERVICE_REQUEST_TIMEOUT', flag: '--request-timeout', defaultText: '30', description: 'Seconds a request (headers and body) may take to arrive; a slower one answers 408 and its connection is closed.',
    apply: (d, t) => { d.limits.requestTimeoutMs = integer(t, 1, 3600) * 1000; } },
  { key: 'wallet_states_kept', env: 'SERVICE_WALLET_STATES_KEPT', flag: '--wallet-states-kept', defaultText: '1000', description: 'Wallet states each instance keeps loaded for reads; past it the least recently read is dropped and loaded again from the database when next read (memory against the time of that load).',
    apply: (d, t) => { d.walletStatesKept = integer(t, 1, 1_000_000); } },
  { key: 'web_active', env: 'SERVICE_WEB_ACTIVE', flag: '--web-active', defaultText: 'True', description: 'Serve the web interface at `/` (`True` or `False`); independent of `api_active`.',
    apply: (d, t) => {
      const word = t.trim().toLowerCase();
      if (TRUE_WORDS.includes(word)) d.webActive = true;
      else if (FALSE_WORDS.includes(word)) d.webActive = false;
      else throw new Error('must be True or False');
    } },
  { key: 'confirmations_notify', env: 'SERVICE_CONFIRMATIONS_NOTIFY', flag: '--confirmations-notify', defaultText: '6', description: 'Confirmations at which a `transaction.confirmed` event is recorded besides the first one.',
    apply: (d, t) => { d.confirmationsNotify = integer(t, 1, 1000); } },
  { key: 'webhook_allow_private', env: 'SERVICE_WEBHOOK_ALLOW_PRIVATE', flag: '--webhook-allow-private', defaultText: 'False', description: 'Let webhooks deliver to loopback and private addresses (a neighbour on the same machine or network); link-local and cloud metadata addresses stay refused.',
    apply: (d, t) => {
      const word = t.trim().toLowerCase();
      if (TRUE_WORDS.includes(word)) d.webhookAllowPrivate = true;
      else if (FALSE_WORDS.includes(word)) d.webhookAllowPrivate = false;
      else throw new Error('must be True or False');
    } },
  { key: 'trust_proxy', env: 'SERVICE_TRUST_PROXY', flag: '--trust-proxy', defaultText: 'none', description: 'Comma-separated addresses or ranges of the reverse proxies or load balancers in front of the service (e.g. `127.0.0.1` or `10.0.0.0/8`): from them, `X-Forwarded-For` names the client (failed-login limits, logs) and `X-Forwarded-Proto` the scheme (the web interface\'s origin check and Secure cookie).',
    apply: (d, t) => { d.trustProxy = addressesOrRanges(t); } },
];

/** The data-folder setting, read before the others because the config file lives in it. */
export const DATA_FOLDER_SETTING = { key: 'data_folder', env: 'SERVICE_DATA_FOLDER', flag: '--data-folder', defaultText: '`~/.wcs`', description: 'Folder of the database, signing key, config file and first-start password.' } as const;

export const CONFIG_FILE_NAME = 'config.json';

export const DEFAULT_COST_LIMITS: CostLimits = {
  userRequestsInFlight: 4,
  userRequestQueue: 64,
  userRequestQueueTimeoutMs: 10_000,
  userEventStreams: 8,
  userRequestRate: 0,
  userRequestBurst: 20,
  maxWalletsPerUser: 50,
  maxGapLimit: 200,
  addressPageMax: 100,
  requestTimeoutMs: 30_000,
};

export interface ConfigSources {
  /** Flags as `--name value` or `--name=value`; anything else is refused. */
  flags?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
}

function defaults(): Draft {
  return {
    host: '127.0.0.1',
    port: 25441,
    databaseUrl: undefined,
    blocksFolderOff: false,
    apiActive: false,
    adminPassword: undefined,
    network: 'mainnet',
    bitcoind: { url: undefined, cookieFile: undefined, user: undefined, password: undefined, blocksFolder: undefined },
    electrum: { ...NO_ELECTRUM },
    maxFeeRate: 1000,
    maxPendingPsbts: 100,
    timelockWarningBlocks: 4320,
    walletStatesKept: 1000,
    tokenMaxLifeSeconds: 365 * 86_400,
    auth: { passwordMinChars: 8, rateLimit: 10, registrationLinkTimeoutHours: 1 },
    logLevel: 'info',
    jwtKey: undefined,
    corsOrigins: [],
    syncIntervalMs: 5_000,
    syncSharing: false,
    syncLeaseMs: 15_000,
    limits: { ...DEFAULT_COST_LIMITS },
    webActive: true,
    confirmationsNotify: 6,
    webhookAllowPrivate: false,
    trustProxy: [],
  };
}

function parseFlags(flags: readonly string[]): Map<string, string> {
  const known = new Set<string>([DATA_FOLDER_SETTING.flag, ...SETTINGS.map((s) => s.flag)]);
  const values = new Map<string, string>();
  for (let i = 0; i < flags.length; i++) {
    const arg = flags[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!known.has(name)) throw new ConfigError(`Unknown option ${name}`);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (name === '--api-active' && (flags[i + 1] === undefined || flags[i + 1]?.startsWith('--'))) value = 'true';
    else value = flags[++i];
    if (value === undefined) throw new ConfigError(`Option ${name} needs a value`);
    values.set(name, value);
  }
  return values;
}

function expandHome(path: string): string {
  return path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

/** An absolute (or `~/`) path of a folder that exists; empty: none. */
function existingFolder(text: string): string | undefined {
  const given = optionalText(text);
  if (given === undefined) return undefined;
  const path = expandHome(given);
  if (!isAbsolute(path)) throw new Error('must be an absolute path (or start with ~/)');
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder) throw new Error('must be a folder that exists and can be read');
  return path;
}

/**
 * The node writes its cookie into the data folder of its network, beside its `blocks` folder (unless started
 * with `-blocksdir`): that folder, if it can be read and holds block files; undefined otherwise.
 */
function blocksFolderBeside(cookieFile: string): string | undefined {
  const folder = resolve(dirname(expandHome(cookieFile)), 'blocks');
  try {
    return readdirSync(folder).some((name) => /^blk\d{5,}\.dat$/.test(name)) ? folder : undefined;
  } catch {
    return undefined;
  }
}

function readConfigFile(dataFolder: string): Map<string, string> {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  const values = new Map<string, string>();
  if (!existsSync(path)) return values;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    // The parser's message may quote part of the file, which may hold a secret: say where, not what.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new ConfigError(`Config file ${path} is not valid JSON${position === undefined ? '' : ` (at character ${position})`}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Config file ${path} must hold a JSON object`);
  }
  const keys = new Set(SETTINGS.map((s) => s.key));
  for (const [key, value] of Object.entries(parsed)) {
    if (!keys.has(key)) throw new ConfigError(`Config file ${path}: unknown setting "${key}"`);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) values.set(key, value.join(','));
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') values.set(key, String(value));
    else throw new ConfigError(`Config file ${path}: setting "${key}" must be a string, number or boolean`);
  }
  return values;
}

function parseDatabase(url: string | undefined, dataFolder: string): DatabaseConfig {
  if (url === undefined) return { kind: 'sqlite', path: join(dataFolder, 'service.sqlite') };
  if (/^postgres(ql)?:\/\//i.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('Invalid setting SERVICE_DATABASE_URL (--database): not a valid postgres:// address');
    }
    return { kind: 'postgres', url };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    throw new ConfigError('Invalid setting SERVICE_DATABASE_URL (--database): use a SQLite file path or a postgres:// address');
  }
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  return { kind: 'sqlite', path: resolve(dataFolder, expandHome(path)) };
}

/**
 * The secret settings config.json holds while users other than its owner may read it (its mode lets
 * group or others read), so the operator can be told; undefined when there is nothing to say.
 */
export function exposedConfigFile(dataFolder: string): { path: string; mode: string; secrets: string[] } | undefined {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o044) === 0) return undefined;
  const present = readConfigFile(dataFolder);
  const secrets = SETTINGS.filter((s) => s.secret && (present.get(s.key) ?? '') !== '').map((s) => s.key);
  return secrets.length === 0 ? undefined : { path, mode: mode.toString(8), secrets };
}

/**
 * `SERVICE_*` variables that name no setting, each with the setting it most likely meant: a misspelt
 * variable would otherwise be without effect, and nothing would say so.
 */
export function unknownSettingVariables(env: Readonly<Record<string, string | undefined>>): { name: string; meant: string | undefined }[] {
  const known = [DATA_FOLDER_SETTING.env, ...SETTINGS.map((s) => s.env)];
  return Object.keys(env)
    .filter((name) => name.startsWith('SERVICE_') && !known.includes(name))
    .sort()
    .map((name) => {
      const [closest] = known.map((candidate) => ({ candidate, distance: editDistance(name, candidate) })).sort((a, b) => a.distance - b.distance);
      return { name, meant: closest && closest.distance <= 3 ? closest.candidate : undefined };
    });
}

/** Levenshtein distance (short names only). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** A setting given on the command line or in the environment (not in config.json), as given. */
export interface GivenSetting {
  key: string;
  text: string;
  secret: boolean;
}

/** config.json's values without those a flag or variable replaces (the other chain source's, see chainSettingsReplaced). */
function fileWithoutReplaced(file: Map<string, string>, flags: Map<string, string>, env: Readonly<Record<string, string | undefined>>): Map<string, string> {
  const given = SETTINGS.filter((s) => (flags.get(s.flag) ?? env[s.env] ?? '').trim() !== '').map((s) => s.key);
  for (const key of chainSettingsReplaced(given)) file.delete(key);
  return file;
}

/** The settings `sources` give by flag or environment variable (a flag wins over its variable). */
export function givenSettings(sources: ConfigSources = {}): GivenSetting[] {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const given: GivenSetting[] = [];
  for (const setting of SETTINGS) {
    const text = flags.get(setting.flag) ?? env[setting.env];
    if (text !== undefined) given.push({ key: setting.key, text, secret: setting.secret === true });
  }
  return given;
}

/** Where each setting's value comes from, for `wcs config show`: secrets are named, never shown. */
export function settingOrigins(sources: ConfigSources, dataFolder: string): Array<{ key: string; env: string; value: string; origin: 'flag' | 'environment' | 'config.json' | 'default' }> {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const file = fileWithoutReplaced(readConfigFile(dataFolder), flags, env);
  return SETTINGS.map((setting) => {
    const fromFlag = flags.get(setting.flag);
    const fromEnv = env[setting.env];
    const fromFile = file.get(setting.key);
    const [text, origin] =
      fromFlag !== undefined ? [fromFlag, 'flag' as const]
      : fromEnv !== undefined ? [fromEnv, 'environment' as const]
      : fromFile !== undefined ? [fromFile, 'config.json' as const]
      : [setting.defaultText.replaceAll('`', ''), 'default' as const];
    // A database or node address is a secret only with credentials in it; the other secrets always are.
    const address = setting.key === 'database_url' || setting.key === 'bitcoind_url';
    const hidden = origin !== 'default' && (address ? urlHasCredentials(text) : setting.secret === true);
    return { key: setting.key, env: setting.env, value: hidden ? '(secret, set)' : text, origin };
  });
}

/** The raw JSON object of `<dataFolder>/config.json` (empty when there is none); loadConfig has checked it. */
export function configFileObject(dataFolder: string): Record<string, unknown> {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  readConfigFile(dataFolder);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : {};
}

/** `http://user:password@host`: an address that carries its own credentials. */
export function urlHasCredentials(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/\s]*@/i.test(url);
}

/** Builds the configuration; throws ConfigError naming the first bad setting. */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const dataFolderText = flags.get(DATA_FOLDER_SETTING.flag) ?? env[DATA_FOLDER_SETTING.env] ?? '~/.wcs';
  if (dataFolderText.trim() === '') {
    throw new ConfigError(`Invalid setting ${DATA_FOLDER_SETTING.env} (${DATA_FOLDER_SETTING.flag}): must not be empty`);
  }
  // A relative folder is relative to where the operator typed the command: npm runs scripts (npm start)
  // in the package folder but says in INIT_CWD where it was started, so `npm start` and `npx wcs` agree.
  const dataFolder = resolve(env.INIT_CWD ?? process.cwd(), expandHome(dataFolderText.trim()));
  const file = fileWithoutReplaced(readConfigFile(dataFolder), flags, env);

  const draft = defaults();
  for (const setting of SETTINGS) {
    const fromFlag = flags.get(setting.flag);
    const fromEnv = env[setting.env];
    const fromFile = file.get(setting.key);
    const [text, origin] =
      fromFlag !== undefined ? [fromFlag, setting.flag]
      : fromEnv !== undefined ? [fromEnv, setting.env]
      : fromFile !== undefined ? [fromFile, `"${setting.key}" in ${join(dataFolder, CONFIG_FILE_NAME)}`]
      : [undefined, ''];
    if (text === undefined) continue;
    try {
      setting.apply(draft, text);
    } catch (error) {
      const shown = setting.secret ? '' : `, got "${text.length > 60 ? `${text.slice(0, 60)}...` : text}"`;
      throw new ConfigError(`Invalid setting ${setting.env} (from ${origin}): ${(error as Error).message}${shown}`);
    }
  }
  const chainConflict = chainSettingsConflict(draft);
  if (chainConflict !== undefined) throw new ConfigError(chainConflict);
  if ((draft.bitcoind.user === undefined) !== (draft.bitcoind.password === undefined)) {
    throw new ConfigError('Invalid setting SERVICE_BITCOIND_USER / SERVICE_BITCOIND_PASSWORD: give both or neither');
  }
  if (draft.bitcoind.url !== undefined && draft.bitcoind.cookieFile === undefined && draft.bitcoind.user === undefined && !urlHasCredentials(draft.bitcoind.url)) {
    throw new ConfigError('Invalid setting SERVICE_BITCOIND_URL (--bitcoind-url, "bitcoind_url" in config.json): give its credentials too, SERVICE_BITCOIND_COOKIE (bitcoind_cookie) or SERVICE_BITCOIND_USER and SERVICE_BITCOIND_PASSWORD (bitcoind_user, bitcoind_password)');
  }
  const { databaseUrl, blocksFolderOff, ...rest } = draft;
  if (!blocksFolderOff && rest.bitcoind.blocksFolder === undefined && rest.bitcoind.user === undefined && rest.bitcoind.cookieFile !== undefined) {
    rest.bitcoind.blocksFolder = blocksFolderBeside(rest.bitcoind.cookieFile);
  }
  return { ...rest, dataFolder, database: parseDatabase(databaseUrl, dataFolder) };
}
