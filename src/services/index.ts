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
import { WalletLeases } from './sync/wallet-following.js';
import { WalletRefusals } from './sync/refusals.js';
import { SyncService, type SyncServiceDeps } from './sync/sync-service.js';
import { PsbtChainReconciler } from './psbts/chain-reconciler.js';
import { WalletScriptsCache, WalletStateCache } from './wallet-state.js';
import { BalanceSummaries } from './balance-summaries.js';
import { SharedLists } from './shared-lists.js';
import { WalletAccess, WalletAdmin, WalletCoins, WalletFiles, WalletLabels, WalletReads } from './wallets/index.js';

/** The wallet part, by who acts: access checks, reads (read access), the owner's administration, coins. */
export interface WalletServices {
  access: WalletAccess;
  reads: WalletReads;
  admin: WalletAdmin;
  coins: WalletCoins;
  /** Wallet setup files of other tools (export; import goes through admin.create). */
  files: WalletFiles;
  /** BIP329 label export and import. */
  labels: WalletLabels;
  /** The wallet states the reads keep loaded (their idle check stops with the service). */
  states: WalletStateCache;
}
import { WalletLimits } from './wallet-limits.js';
import { GapDerivation } from './gap-derivation.js';
import { WebSessionService } from './web-sessions.js';
import { WebhookDeliverer } from './events/deliverer.js';
import { EventStreamService } from './events/stream.js';
import { WebhookService } from './events/webhooks.js';

export interface Services {
  authentication: AuthenticationService;
  users: UserService;
  tokens: TokenService;
  serviceDetails: ServiceDetailsService;
  health: HealthService;
  /** The chain source (null when no node is configured): fee estimates, relay fees, broadcast, tip. */
  chain: CachedChainAccess;
  wallets: WalletServices;
  sync: SyncService;
  /** PSBTs of wallets: creation, reservations, signatures, broadcast. */
  psbts: PsbtService;
  /** Sessions of the web interface. */
  webSessions: WebSessionService;
  /** Webhook registration, delivery log and redelivery. */
  webhooks: WebhookService;
  /** Sends the recorded events to the webhooks (started with the server). */
  webhookDeliverer: WebhookDeliverer;
  /** The live stream's reads. */
  events: EventStreamService;
  /** The worker thread deriving new wallets' gaps (none where no compiled worker exists); stops with the service. */
  gapDerivation: GapDerivation | undefined;
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
  /** Where the background work (sync, webhook delivery) reports what an operator should know. */
  log?: ServiceLog;
}

export type ServiceLog = NonNullable<SyncServiceDeps['log']>;

export function createServices(deps: ServiceDeps): Services {
  const { config, store } = deps;
  const now = deps.now ?? Date.now;
  const hasher = deps.hasher ?? new PasswordHasher();
  const jwt = new JwtCodec(deps.signingKey);
  const limiter = new FailedLoginLimiter(store.authFailures);
  const chain = new CachedChainAccess(deps.chain ?? null, now);
  const gapDerivation = GapDerivation.start({ log: deps.log });
  const scripts = new WalletScriptsCache(gapDerivation);
  const balances = new BalanceSummaries();
  const sharedLists = new SharedLists(config.walletStatesSharedFrom);
  const states = new WalletStateCache(store, scripts, { count: config.walletStatesKept, budget: config.walletStatesBudget, idleMs: config.walletStatesIdleMs }, balances, sharedLists);
  const refusals = new WalletRefusals();
  const sync = new SyncService({
    store,
    balances,
    sharedLists,
    follower: chain.source?.follower ?? null,
    scripts,
    leadership: deps.syncLeadership ?? ALWAYS_LEADER,
    // One SQLite process follows every wallet; PostgreSQL instances share them when asked (ADR 0014).
    ...(config.syncSharing && store.kind === 'postgres' ? { following: new WalletLeases(store, { leaseMs: config.syncLeaseMs, log: deps.log }) } : {}),
    psbts: new PsbtChainReconciler(now),
    progress: chain,
    refusals,
    confirmationsNotify: config.confirmationsNotify,
    timelockWarningBlocks: config.timelockWarningBlocks,
    now,
    ...(deps.syncBatchBlocks !== undefined ? { batchBlocks: deps.syncBatchBlocks } : {}),
    log: deps.log,
  });
  const access = new WalletAccess(store);
  const reads = new WalletReads({ store, access, chain, states, scripts, refusals, timelockWarningBlocks: config.timelockWarningBlocks });
  const wallets: WalletServices = {
    access,
    reads,
    admin: new WalletAdmin({
      store,
      network: config.network,
      access,
      reads,
      chain,
      states,
      scripts,
      limits: new WalletLimits({ store, maxWalletsPerUser: config.limits.maxWalletsPerUser, maxGapLimit: config.limits.maxGapLimit }),
      scans: sync,
      now,
    }),
    coins: new WalletCoins({ store, network: config.network, access, states, scripts }),
    files: new WalletFiles({ access }),
    labels: new WalletLabels({ store, access, states, now }),
    states,
  };
  const health = new HealthService([{ name: 'store', check: () => store.ping() }, chain.readinessCheck(), sync.readinessCheck()]);
  const serviceDetails = new ServiceDetailsService({ config, version: deps.version, now, wallets: reads, ...(chain.source ? { chain } : {}) });
  const psbts = new PsbtService({ store, access, coins: wallets.coins, chain: () => chain.source, maxFeeRate: config.maxFeeRate, maxPending: config.maxPendingPsbts, timelockWarningBlocks: config.timelockWarningBlocks, now });
  const authentication = new AuthenticationService({ store, hasher, jwt, limiter, rateLimit: config.auth.rateLimit, now });
  return {
    authentication,
    users: new UserService({ store, hasher, passwordMinChars: config.auth.passwordMinChars, now }),
    tokens: new TokenService({ store, jwt, maxLifeSeconds: config.tokenMaxLifeSeconds, now, wallets: access }),
    serviceDetails,
    health,
    chain,
    wallets,
    sync,
    psbts,
    webSessions: new WebSessionService({ store, authentication, now }),
    webhooks: new WebhookService({ store, access, allowPrivate: config.webhookAllowPrivate, now }),
    webhookDeliverer: new WebhookDeliverer({ store, allowPrivate: config.webhookAllowPrivate, now, log: deps.log }),
    events: new EventStreamService({ store, access, now }),
    gapDerivation,
  };
}

export { ServiceError, type FieldError, type ServiceErrorKind } from './errors.js';
export type { Principal } from './principal.js';
export type { ReadinessCheck } from './health.js';
export type { WalletAccessNeed, WalletForSpending, SpendableUtxo } from './wallets/index.js';
export type { WalletDirectory, WalletListing, ChainStatus, ChainStatusSource } from './service-details.js';
