/**
 * Turns credentials into a Principal: BasicAuth (user name and password; failures limited per client
 * address and per client address and user name) and Bearer tokens (HS256 JWT, checked against the
 * store on every request so a deleted token is refused at once, on every instance).
 */
import { createHash } from 'node:crypto';
import { sameHash, tokenHash, type JwtCodec, type TokenClaims } from '../auth/jwt.js';
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
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(private readonly deps: AuthenticationDeps) {}

  async authenticateBasic(userName: string, password: string, clientAddress: string): Promise<Principal> {
    const { store, hasher, limiter, now, rateLimit } = this.deps;
    // Counted per address and per (address, user name): a stranger's wrong passwords lock out the
    // stranger's address, never the user, whose right password from another address still works.
    const scopes = [
      { key: `ip:${clientAddress}`, limit: rateLimit * ADDRESS_LIMIT_FACTOR },
      { key: `ip-user:${clientAddress}:${createHash('sha256').update(userName, 'utf8').digest('hex').slice(0, 32)}`, limit: rateLimit },
    ];
    const admission = await limiter.admit(scopes, now);
    if (!admission.admitted) {
      const message = admission.reason === 'busy' ? 'Too many login attempts at once; retry later' : 'Too many failed login attempts; retry later';
      throw new ServiceError('rate_limited', 'rate_limited', message, { retryAfterSeconds: admission.retryAfterSeconds });
    }
    let user: Awaited<ReturnType<Store['users']['find']>>;
    let ok: boolean;
    try {
      user = await store.users.find(userName);
      // Unknown users go through a full verification too (timing), and count as failures.
      ok = await hasher.verify(user?.passwordHash, password);
    } catch (error) {
      await admission.abandoned();
      throw error;
    }
    if (!ok || !user) {
      await admission.failed();
      throw unauthenticated('Basic');
    }
    await admission.succeeded();
    return { userName: user.name, isAdmin: user.isAdmin };
  }

  async authenticateBearer(token: string): Promise<Principal> {
    const nowMs = this.deps.now();
    const verified = this.verifiedToken(token, nowMs);
    if (!verified) throw unauthenticated('Bearer');
    const { claims, hash } = verified;
    // The store decides on every request: a deleted token or user is refused at once, on every instance.
    const found = await this.deps.store.tokens.findWithUser(claims.jti);
    if (!found || found.token.userName !== claims.sub || found.token.expiresAt <= nowMs || !sameHash(found.token.tokenHash, hash)) {
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

  /**
   * The claims and SHA-256 of a well-signed, unexpired token. A token's signature and hash never
   * change, so each token text is checked once and kept (bounded); only its expiry is looked at again.
   */
  private verifiedToken(token: string, nowMs: number): VerifiedToken | undefined {
    const kept = this.verified.get(token);
    if (kept) {
      if (kept.claims.exp * 1000 > nowMs) return kept;
      this.verified.delete(token);
      return undefined;
    }
    const claims = this.deps.jwt.verify(token, nowMs);
    if (!claims) return undefined;
    const verified = { claims, hash: tokenHash(token) };
    if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, verified);
    return verified;
  }
}

interface VerifiedToken {
  claims: TokenClaims;
  hash: string;
}

/** Token texts whose signature was checked, kept at once; past it, the oldest is checked again when used. */
const VERIFIED_TOKENS_KEPT = 10_000;
