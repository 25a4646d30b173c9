/**
 * Turns credentials into a Principal: BasicAuth (user name and password, rate limited per client
 * address and per client address and user name) and Bearer tokens (HS256 JWT, checked against the
 * store on every request so a deleted token is refused at once, on every instance).
 */
import { createHash } from 'node:crypto';
import { sameHash, tokenHash, type JwtCodec } from '../auth/jwt.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { FailedLoginLimiter } from '../auth/rate-limit.js';
import type { Store } from '../store/repositories.js';
import { ServiceError, unauthenticated } from './errors.js';
import { isPermission } from './permissions.js';
import type { Principal } from './principal.js';

export interface AuthenticationDeps {
  store: Store;
  hasher: PasswordHasher;
  jwt: JwtCodec;
  limiter: FailedLoginLimiter;
  /** Failed attempts allowed per minute for one user name from one address (`rate_limit`). */
  rateLimit: number;
  now: () => number;
}

/** One address may fail this many times `rate_limit` in a minute over all user names it tries. */
export const ADDRESS_LIMIT_FACTOR = 5;

export class AuthenticationService {
  constructor(private readonly deps: AuthenticationDeps) {}

  async authenticateBasic(userName: string, password: string, clientAddress: string): Promise<Principal> {
    const { store, hasher, limiter, now, rateLimit } = this.deps;
    // Counted per address and per (address, user name): a stranger's wrong passwords lock out the
    // stranger's address, never the user, whose right password from another address still works.
    const scopes = [
      { key: `ip:${clientAddress}`, limit: rateLimit * ADDRESS_LIMIT_FACTOR },
      { key: `ip-user:${clientAddress}:${createHash('sha256').update(userName, 'utf8').digest('hex').slice(0, 32)}`, limit: rateLimit },
    ];
    const admission = await limiter.admit(scopes, now());
    if (!admission.admitted) {
      throw new ServiceError('rate_limited', 'rate_limited', 'Too many failed login attempts; retry later', {
        retryAfterSeconds: admission.retryAfterSeconds,
      });
    }
    const user = await store.users.find(userName);
    // Unknown users go through a full verification too (timing), and count as failures.
    const ok = await hasher.verify(user?.passwordHash, password);
    if (!ok || !user) throw unauthenticated('Basic');
    await admission.succeeded();
    return { userName: user.name, isAdmin: user.isAdmin };
  }

  async authenticateBearer(token: string): Promise<Principal> {
    const { store, jwt, now } = this.deps;
    const nowMs = now();
    const claims = jwt.verify(token, nowMs);
    if (!claims) throw unauthenticated('Bearer');
    const found = await store.tokens.findWithUser(claims.jti);
    if (
      !found ||
      found.token.userName !== claims.sub ||
      found.token.expiresAt <= nowMs ||
      !sameHash(found.token.tokenHash, tokenHash(token))
    ) {
      throw unauthenticated('Bearer');
    }
    const { permissions, walletIds } = found.token;
    return {
      userName: found.token.userName,
      isAdmin: found.userIsAdmin,
      tokenId: found.token.id,
      ...(permissions ? { permissions: permissions.filter(isPermission) } : {}),
      ...(walletIds ? { walletIds } : {}),
    };
  }
}
