/**
 * The service-details object of `GET /v1alpha/service` (admin only). The wallet lists and the
 * chain status come from hooks the wallet and chain parts provide; until then they are empty/null.
 */
import type { Config } from '../config.js';
import { ServiceError } from './errors.js';
import { hasPermission, requirePermission } from './permissions.js';
import type { Principal } from './principal.js';

/** What the wallet part tells about the wallets a caller can access. */
export interface WalletListing {
  wallets_names: string[];
  alias_name: Record<string, string>;
  name_alias: Record<string, string>;
  wallets_alias: string[];
}

export interface WalletDirectory {
  listFor(principal: Principal): Promise<WalletListing>;
}

export interface ChainStatus {
  backend: string;
  /** The network the node follows; null while unknown (no node, or it does not answer). */
  network: string | null;
  tip_height: number | null;
  tip_hash: string | null;
  sync_state: string;
}

export interface ChainStatusSource {
  status(): Promise<ChainStatus>;
}

/** Configuration as shown to admins: never a password, key, RPC credential or database URL. */
export interface PublicConfig {
  auth: { method: 'usernamepassword'; password_min_chars: number; rate_limit: string; registration_link_timeout: string };
  host: string;
  port: number;
  api_active: boolean;
  database: 'sqlite' | 'postgres';
  network: string;
  bitcoind_url: string | null;
  bitcoind_auth: 'cookie' | 'userpass' | 'none';
  /** The node's blocks folder scans read from while the node keeps no filters; null: none. */
  bitcoind_blocks_folder: string | null;
  /** The Electrum server followed instead of Bitcoin Core; null: none (then `bitcoind_url` is the source). */
  electrum_url: string | null;
  /** The pinned SHA-256 fingerprint of its certificate (lowercase hex); null: the system's CAs. */
  electrum_tls_fingerprint: string | null;
  /** The SOCKS5 proxy it is reached through; null: direct. */
  electrum_proxy: string | null;
  max_fee_rate: number;
  token_max_life: number;
  log_level: string;
  cors_origins: string[];
  /** What one user may cost the service (seconds for request_timeout). */
  limits: {
    user_requests_in_flight: number;
    user_request_queue: number;
    user_request_queue_timeout: number;
    user_event_streams: number;
    user_request_rate: number;
    user_request_burst: number;
    max_wallets_per_user: number;
    max_gap_limit: number;
    address_page_max: number;
    request_timeout: number;
  };
  wallet_states_kept: number;
  wallet_states_budget: number;
  wallet_states_idle: number;
}

export interface ServiceDetails {
  data_folder: string;
  config: PublicConfig;
  version: string;
  network: string;
  chain: ChainStatus | null;
  wallets_names: string[];
  last_update: string;
  alias_name: Record<string, string>;
  name_alias: Record<string, string>;
  wallets_alias: string[];
}

export function publicConfig(config: Config): PublicConfig {
  return {
    auth: {
      method: 'usernamepassword',
      password_min_chars: config.auth.passwordMinChars,
      rate_limit: String(config.auth.rateLimit),
      registration_link_timeout: String(config.auth.registrationLinkTimeoutHours),
    },
    host: config.host,
    port: config.port,
    api_active: config.apiActive,
    database: config.database.kind,
    network: config.network,
    bitcoind_url: config.bitcoind.url === undefined ? null : withoutCredentials(config.bitcoind.url),
    bitcoind_auth: config.bitcoind.user !== undefined ? 'userpass' : config.bitcoind.cookieFile !== undefined ? 'cookie' : 'none',
    bitcoind_blocks_folder: config.bitcoind.blocksFolder ?? null,
    electrum_url: config.electrum.url ?? null,
    electrum_tls_fingerprint: config.electrum.tlsFingerprint ?? null,
    electrum_proxy: config.electrum.proxy ?? null,
    max_fee_rate: config.maxFeeRate,
    token_max_life: config.tokenMaxLifeSeconds,
    log_level: config.logLevel,
    cors_origins: [...config.corsOrigins],
    limits: {
      user_requests_in_flight: config.limits.userRequestsInFlight,
      user_request_queue: config.limits.userRequestQueue,
      user_request_queue_timeout: Math.round(config.limits.userRequestQueueTimeoutMs / 1000),
      user_event_streams: config.limits.userEventStreams,
      user_request_rate: config.limits.userRequestRate,
      user_request_burst: config.limits.userRequestBurst,
      max_wallets_per_user: config.limits.maxWalletsPerUser,
      max_gap_limit: config.limits.maxGapLimit,
      address_page_max: config.limits.addressPageMax,
      request_timeout: Math.round(config.limits.requestTimeoutMs / 1000),
    },
    wallet_states_kept: config.walletStatesKept,
    wallet_states_budget: config.walletStatesBudget,
    wallet_states_idle: config.walletStatesIdleMs / 1000,
  };
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(invalid address)';
  }
}

/** `MM/DD/YYYY, HH:MM:SS` in UTC. */
export function formatLastUpdate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

export const NO_WALLETS: WalletDirectory = {
  listFor: async () => ({ wallets_names: [], alias_name: {}, name_alias: {}, wallets_alias: [] }),
};

export interface ServiceDetailsDeps {
  config: Config;
  version: string;
  now: () => number;
  wallets?: WalletDirectory;
  chain?: ChainStatusSource;
}

export class ServiceDetailsService {
  private readonly wallets: WalletDirectory;
  private readonly chain: ChainStatusSource | undefined;
  private readonly shownConfig: PublicConfig;

  constructor(private readonly deps: ServiceDetailsDeps) {
    this.wallets = deps.wallets ?? NO_WALLETS;
    this.chain = deps.chain;
    this.shownConfig = publicConfig(deps.config);
  }

  async details(principal: Principal): Promise<ServiceDetails> {
    requirePermission(principal, 'service:read');
    if (!principal.isAdmin) throw new ServiceError('forbidden', 'forbidden', 'Only an admin may read the service details');
    // Wallet names are wallet data: a token narrowed to service:read without wallets:read sees the service, not its wallets.
    const wallets = hasPermission(principal, 'wallets:read') ? this.wallets : NO_WALLETS;
    const [listing, chain] = await Promise.all([wallets.listFor(principal), this.chain ? this.chain.status() : null]);
    // Member order is part of the contract.
    return {
      data_folder: this.deps.config.dataFolder,
      config: this.shownConfig,
      version: this.deps.version,
      network: this.deps.config.network,
      chain,
      wallets_names: listing.wallets_names,
      last_update: formatLastUpdate(this.deps.now()),
      alias_name: listing.alias_name,
      name_alias: listing.name_alias,
      wallets_alias: listing.wallets_alias,
    };
  }
}
