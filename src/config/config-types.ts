/**
 * The shape of the service's configuration (Config), of the draft the settings fill in while it is
 * built (Draft), and of one setting's entry in the table (Setting).
 */
import type { NetworkName } from '../core/network.js';
import type { ElectrumConfig } from './chain-settings.js';
import type { CostLimits } from './cost-limit-settings.js';

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
  /** An Electrum server as the chain source instead of Bitcoin Core (chain-settings.ts). */
  electrum: ElectrumConfig;
  /** Highest fee rate a PSBT may use, sat/vB. */
  maxFeeRate: number;
  /** Most pending PSBTs one wallet may hold (each reserves coins until it settles or is deleted). */
  maxPendingPsbts: number;
  /** Miniscript wallets: a coin whose recovery path opens within this many blocks is flagged (and can be refreshed). */
  timelockWarningBlocks: number;
  /** Wallet states the reads keep loaded; past it the least recently read is dropped (and loaded again when read). */
  walletStatesKept: number;
  /** Transactions plus coins the reads' wallet states may hold together; past it the least recently read are dropped. */
  walletStatesBudget: number;
  /** Transactions from which the reads of a wallet the sync holds use its state (shared-lists.ts); 0: never. */
  walletStatesSharedFrom: number;
  /** Milliseconds a reads' wallet state stays loaded unread; 0: kept until the other bounds drop it. */
  walletStatesIdleMs: number;
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
  /** `True` or `False`: the flag may stand alone (meaning True), and an empty value means the default. */
  kind?: 'true-or-false';
  apply(draft: Draft, text: string): void;
}

export interface ConfigSources {
  /** Flags as `--name value` or `--name=value`; anything else is refused. */
  flags?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
}

/** A setting given on the command line or in the environment (not in config.json), as given. */
export interface GivenSetting {
  key: string;
  text: string;
  secret: boolean;
}
