/**
 * The services object: every use case, built from explicit dependencies (no singletons).
 * main.ts builds it once; api/ and cli/ receive it. New use cases are added as members here.
 */
import { JwtCodec } from '../auth/jwt.js';
import { PasswordHasher } from '../auth/passwords.js';
import { FailedLoginLimiter } from '../auth/rate-limit.js';
import type { Config } from '../config.js';
import type { Store } from '../store/repositories.js';
import { AuthenticationService } from './authentication.js';
import { HealthService } from './health.js';
import { ServiceDetailsService } from './service-details.js';
import { TokenService } from './tokens.js';
import { UserService } from './users.js';
import { PsbtService } from './psbts/service.js';

export interface Services {
  authentication: AuthenticationService;
  users: UserService;
  tokens: TokenService;
  serviceDetails: ServiceDetailsService;
  health: HealthService;
  /** PSBTs of wallets: creation, reservations, signatures, broadcast. */
  psbts: PsbtService;
}

export interface ServiceDeps {
  config: Config;
  store: Store;
  signingKey: Uint8Array;
  version: string;
  now?: () => number;
  hasher?: PasswordHasher;
}

export function createServices(deps: ServiceDeps): Services {
  const { config, store } = deps;
  const now = deps.now ?? Date.now;
  const hasher = deps.hasher ?? new PasswordHasher();
  const jwt = new JwtCodec(deps.signingKey);
  const limiter = new FailedLoginLimiter(store.authFailures, config.auth.rateLimit);
  return {
    authentication: new AuthenticationService({ store, hasher, jwt, limiter, now }),
    users: new UserService({ store, hasher, passwordMinChars: config.auth.passwordMinChars, now }),
    tokens: new TokenService({ store, jwt, maxLifeSeconds: config.tokenMaxLifeSeconds, now }),
    serviceDetails: new ServiceDetailsService({ config, version: deps.version, now }),
    health: new HealthService([{ name: 'store', check: () => store.ping() }]),
    psbts: new PsbtService({ store, maxFeeRate: config.maxFeeRate, now }),
  };
}

export { ServiceError, type FieldError, type ServiceErrorKind } from './errors.js';
export type { Principal } from './principal.js';
export type { ReadinessCheck } from './health.js';
export type { WalletDirectory, WalletListing, ChainStatus, ChainStatusSource } from './service-details.js';
