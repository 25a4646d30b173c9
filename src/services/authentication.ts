/**
 * Turns credentials into a Principal: BasicAuth (user name and password, rate limited per client
 * address and per user name) and Bearer tokens (HS256 JWT, checked against the store on every
 * request so a deleted token is refused at once, on every instance).
 */
import { sameHash, tokenHash, type JwtCodec } from '../auth/jwt.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { FailedLoginLimiter } from '../auth/rate-limit.js';
import type { Store } from '../store/repositories.js';
import { ServiceError, unauthenticated } from './errors.js';
import type { Principal } from './principal.js';

export interface AuthenticationDeps {
  store: Store;
  hasher: PasswordHasher;
  jwt: JwtCodec;
  limiter: FailedLoginLimiter;
  now: () => number;
}

export class AuthenticationService {
  constructor(private readonly deps: AuthenticationDeps) {}

  async authenticateBasic(userName: string, password: string, clientAddress: string): Promise<Principal> {
    const { store, hasher, limiter, now } = this.deps;
    const scopes = [`ip:${clientAddress}`, `user:${userName}`];
    const decision = await limiter.check(scopes, now());
    if (decision.limited) {
      throw new ServiceError('rate_limited', 'rate_limited', 'Too many failed login attempts; retry later', {
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
    const user = await store.users.find(userName);
    // Unknown users go through a full verification too (timing), and count as failures.
    const ok = await hasher.verify(user?.passwordHash, password);
    if (!ok || !user) {
      await limiter.recordFailure(scopes, now());
      throw unauthenticated('Basic');
    }
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
    return { userName: found.token.userName, isAdmin: found.userIsAdmin, tokenId: found.token.id };
  }
}
