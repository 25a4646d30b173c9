/**
 * The services object: every use case, built from explicit dependencies (no singletons).
 * main.ts builds it once; api/ and cli/ receive it. New use cases are added as members here.
 */
import { JwtCodec } from '../auth/jwt.js';
import { PasswordHasher } from '../auth/passwords.js';
import { FailedLoginLimiter } from '../auth/rate-limit.js';
import type { ChainSource } from '../chain/types.js';
import type { Config } from '../config.js';
import type { Store } from '../store/repositories.js';
import { AuthenticationService } from './authentication.js';
import { HealthService } from './health.js';
import { ServiceDetailsService } from './service-details.js';
import { TokenService } from './tokens.js';
import { UserService } from './users.js';
import { PsbtService } from './psbts/service.js';
import { CachedChainAccess } from './sync/chain-access.js';
import { ALWAYS_LEADER, type SyncLeadership } from './sync/leadership.js';
import { SyncService } from './sync/sync-service.js';
import type { WalletReader } from './wallet-access.js';
import { WalletScriptsCache } from './wallet-state.js';
import { WalletLimits } from './wallet-limits.js';
import { WalletService } from './wallets.js';

export interface Services {
  authentication: AuthenticationService;
  users: UserService;
  tokens: TokenService;
  serviceDetails: ServiceDetailsService;
  health: HealthService;
  /** The chain source (null when no node is configured): fee estimates, relay fees, broadcast, tip. */
  chain: CachedChainAccess;
  wallets: WalletService;
  /** The wallet seam of the PSBT part (the same object as `wallets`). */
  walletReader: WalletReader;
  sync: SyncService;
  /** PSBTs of wallets: creation, reservations, signatures, broadcast. */
  psbts: PsbtService;
  /** How many wallets a user may own, and how large their gap limits may be. */
  walletLimits: WalletLimits;
}

export interface ServiceDeps {
  config: Config;
  store: Store;
  signingKey: Uint8Array;
  version: string;
  now?: () => number;
  hasher?: PasswordHasher;
  /** Bitcoin Core (or another backend); absent: wallet endpoints that need the chain answer 503. */
  chain?: ChainSource | null;
  /** Who may run the sync when several instances share a database (default: this one). */
  syncLeadership?: SyncLeadership;
  /** Blocks a wallet group advances before the next group's turn. */
  syncBatchBlocks?: number;
}

export function createServices(deps: ServiceDeps): Services {
  const { config, store } = deps;
  const now = deps.now ?? Date.now;
  const hasher = deps.hasher ?? new PasswordHasher();
  const jwt = new JwtCodec(deps.signingKey);
  const limiter = new FailedLoginLimiter(store.authFailures);
  const chain = new CachedChainAccess(deps.chain ?? null, now);
  const scripts = new WalletScriptsCache();
  const wallets = new WalletService({ store, network: config.network, chain, now, scripts });
  const sync = new SyncService({
    store,
    chain: chain.source,
    scripts,
    leadership: deps.syncLeadership ?? ALWAYS_LEADER,
    onTip: (tip) => chain.noteTip(tip),
    ...(deps.syncBatchBlocks !== undefined ? { batchBlocks: deps.syncBatchBlocks } : {}),
  });
  chain.syncState = () => sync.syncState;
  const health = new HealthService([{ name: 'store', check: () => store.ping() }, chain.readinessCheck()]);
  const serviceDetails = new ServiceDetailsService({ config, version: deps.version, now, wallets, ...(chain.source ? { chain } : {}) });
  const psbts = new PsbtService({ store, wallets, chain: () => chain.source, maxFeeRate: config.maxFeeRate, now });
  wallets.setPsbtReservations(psbts);
  return {
    authentication: new AuthenticationService({ store, hasher, jwt, limiter, rateLimit: config.auth.rateLimit, now }),
    users: new UserService({ store, hasher, passwordMinChars: config.auth.passwordMinChars, now }),
    tokens: new TokenService({ store, jwt, maxLifeSeconds: config.tokenMaxLifeSeconds, now }),
    serviceDetails,
    health,
    chain,
    wallets,
    walletReader: wallets,
    sync,
    psbts,
    walletLimits: new WalletLimits({ store, maxWalletsPerUser: config.limits.maxWalletsPerUser, maxGapLimit: config.limits.maxGapLimit }),
  };
}

export { ServiceError, type FieldError, type ServiceErrorKind } from './errors.js';
export type { Principal } from './principal.js';
export type { ReadinessCheck } from './health.js';
export type { WalletAccessNeed, WalletForSpending, WalletReader, WalletRecord, SpendableUtxo, PsbtReservations } from './wallet-access.js';
export type { WalletDirectory, WalletListing, ChainStatus, ChainStatusSource } from './service-details.js';
