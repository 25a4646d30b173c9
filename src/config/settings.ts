/**
 * The settings table: every setting's key in config.json, environment variable, flag, default (as the help
 * and README show it) and how its text is applied to the draft configuration, in the order they are checked
 * and listed. Groups with their own checks live beside it (bitcoind-, chain- and cost-limit-settings.ts).
 */
import { parseDuration } from '../auth/duration.js';
import { NETWORK_NAMES } from '../core/network.js';
import { BITCOIND_SETTINGS } from './bitcoind-settings.js';
import { ELECTRUM_SETTINGS, NO_ELECTRUM } from './chain-settings.js';
import { holdsCredentials } from './config-error.js';
import { LOG_LEVELS, type Draft, type Setting } from './config-types.js';
import { COST_LIMIT_SETTINGS, DEFAULT_COST_LIMITS } from './cost-limit-settings.js';
import { addressesOrRanges, databaseAddress, decimal, hostAddress, integer, oneOf, trueOrFalse } from './setting-values.js';

export const SETTINGS: readonly Setting[] = [
  { key: 'host', env: 'SERVICE_HOST', flag: '--host', defaultText: '127.0.0.1', description: 'Address the HTTP server listens on.',
    apply: (d, t) => { d.host = hostAddress(t); } },
  { key: 'port', env: 'SERVICE_PORT', flag: '--port', defaultText: '25441', description: 'TCP port of the HTTP server (0: any free port).',
    apply: (d, t) => { d.port = integer(t, 0, 65535); } },
  { key: 'database_url', env: 'SERVICE_DATABASE_URL', flag: '--database', defaultText: '`<data_folder>/service.sqlite`', description: 'A SQLite file path (or `sqlite:<path>`), or `postgres://user:password@host:port/database`.', secret: true,
    apply: (d, t) => { d.databaseUrl = databaseAddress(t); } },
  { key: 'api_active', env: 'SERVICE_API_ACTIVE', flag: '--api-active', defaultText: 'False', description: 'Serve the REST API under `/api` (`True`, `true`, `1`, `yes`); otherwise every `/api` path is 404.',
    kind: 'true-or-false',
    apply: (d, t) => { d.apiActive = trueOrFalse(t, false); } },
  { key: 'admin_password', env: 'SERVICE_ADMIN_PASSWORD', flag: '--admin-password', defaultText: 'random, printed once', description: 'Password of the `admin` user created on first start (when no user exists).', secret: true,
    apply: (d, t) => { d.adminPassword = t === '' ? undefined : t; } },
  { key: 'network', env: 'SERVICE_NETWORK', flag: '--network', defaultText: 'mainnet', description: 'Bitcoin network: mainnet, testnet, testnet4, signet or regtest.',
    apply: (d, t) => { d.network = oneOf(t, NETWORK_NAMES); } },
  ...BITCOIND_SETTINGS,
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
  { key: 'jwt_key', env: 'SERVICE_JWT_KEY', flag: '--jwt-key', defaultText: 'random key in `<data_folder>/jwt-signing-key`', description: 'HS256 signing key for tokens, at least 32 characters, not white space only. Changing it invalidates every token.', secret: true,
    apply: (d, t) => {
      if (t === '') { d.jwtKey = undefined; return; }
      if (Buffer.byteLength(t, 'utf8') < 32) throw new Error('must be at least 32 characters');
      // Spaces only (a variable filled from an unset one, padded) would sign every token with a key anyone can guess.
      if (t.trim() === '') throw new Error('must not be only white space');
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
  { key: 'sync_interval', env: 'SERVICE_SYNC_INTERVAL', flag: '--sync-interval', defaultText: '5', description: 'Seconds between chain sync passes (new blocks, mempool); a decimal number such as 2 or 0.5; 0 turns the background sync off.',
    apply: (d, t) => {
      d.syncIntervalMs = Math.round(decimal(t, 0, 86_400, 'must be a number of seconds from 0 to 86400') * 1000);
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
  ...COST_LIMIT_SETTINGS,
  { key: 'wallet_states_kept', env: 'SERVICE_WALLET_STATES_KEPT', flag: '--wallet-states-kept', defaultText: '1000', description: 'Wallet states each instance keeps loaded for reads; past it the least recently read is dropped and loaded again from the database when next read (memory against the time of that load).',
    apply: (d, t) => { d.walletStatesKept = integer(t, 1, 1_000_000); } },
  { key: 'wallet_states_budget', env: 'SERVICE_WALLET_STATES_BUDGET', flag: '--wallet-states-budget', defaultText: '500000', description: 'Transactions plus coins the wallet states kept for reads may hold together per instance (about 650 bytes of memory each: 500000, about 325 MB, holds one wallet of 200,000 transactions and 100,000 coins); past it the least recently read states are dropped, never the one just read.',
    apply: (d, t) => { d.walletStatesBudget = integer(t, 1, 1_000_000_000); } },
  { key: 'wallet_states_shared_from', env: 'SERVICE_WALLET_STATES_SHARED_FROM', flag: '--wallet-states-shared-from', defaultText: '5000', description: 'Transactions from which the reads of a wallet this instance follows use the state the sync holds of it, with lists of their own over it, instead of loading it a second time from the database; 0: never.',
    apply: (d, t) => { d.walletStatesSharedFrom = integer(t, 0, 1_000_000_000); } },
  { key: 'wallet_states_idle', env: 'SERVICE_WALLET_STATES_IDLE', flag: '--wallet-states-idle', defaultText: '600', description: 'Seconds a wallet state kept for reads stays loaded unread before it is dropped (a decimal number such as 600 or 0.5); 0 keeps it until `wallet_states_kept` or `wallet_states_budget` drops it.',
    apply: (d, t) => {
      d.walletStatesIdleMs = Math.round(decimal(t, 0, 86_400, 'must be a number of seconds from 0 to 86400') * 1000);
    } },
  { key: 'web_active', env: 'SERVICE_WEB_ACTIVE', flag: '--web-active', defaultText: 'True', description: 'Serve the web interface at `/` (`True` or `False`); independent of `api_active`.',
    kind: 'true-or-false',
    apply: (d, t) => { d.webActive = trueOrFalse(t, true); } },
  { key: 'confirmations_notify', env: 'SERVICE_CONFIRMATIONS_NOTIFY', flag: '--confirmations-notify', defaultText: '6', description: 'Confirmations at which a `transaction.confirmed` event is recorded besides the first one.',
    apply: (d, t) => { d.confirmationsNotify = integer(t, 1, 1000); } },
  { key: 'webhook_allow_private', env: 'SERVICE_WEBHOOK_ALLOW_PRIVATE', flag: '--webhook-allow-private', defaultText: 'False', description: 'Let webhooks deliver to loopback and private addresses (a neighbour on the same machine or network); link-local and cloud metadata addresses stay refused.',
    kind: 'true-or-false',
    apply: (d, t) => { d.webhookAllowPrivate = trueOrFalse(t, false); } },
  { key: 'trust_proxy', env: 'SERVICE_TRUST_PROXY', flag: '--trust-proxy', defaultText: 'none', description: 'Comma-separated addresses or ranges of the reverse proxies or load balancers in front of the service (e.g. `127.0.0.1` or `10.0.0.0/8`): from them, `X-Forwarded-For` names the client (failed-login limits, logs) and `X-Forwarded-Proto` the scheme (the web interface\'s origin check and Secure cookie).',
    apply: (d, t) => { d.trustProxy = addressesOrRanges(t); } },
];

/** The settings whose value is an address: a secret only with credentials in it. */
const ADDRESS_KEYS: readonly string[] = ['database_url', 'bitcoind_url', 'electrum_url', 'electrum_proxy'];

/**
 * Whether `text`, given for `setting`, is a secret: a password or key that is set, or any value holding an
 * address with credentials in it (`postgres://user:password@...`); a database or node address without them is none.
 */
export function isSecretText(setting: Setting, text: string): boolean {
  if (holdsCredentials(text)) return true;
  return setting.secret === true && !ADDRESS_KEYS.includes(setting.key) && text !== '';
}

/** The data-folder setting, read before the others because the config file lives in it. */
export const DATA_FOLDER_SETTING = { key: 'data_folder', env: 'SERVICE_DATA_FOLDER', flag: '--data-folder', defaultText: '`~/.wcs`', description: 'Folder of the database, signing key, config file and first-start password.' } as const;

/** The values of the settings none of the sources gives. */
export function defaultDraft(): Draft {
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
    walletStatesBudget: 500_000,
    walletStatesSharedFrom: 5_000,
    walletStatesIdleMs: 600_000,
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
