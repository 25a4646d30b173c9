/**
 * Sessions of the web interface. Sign-in goes through the same password check and failed-login
 * limiter as the token endpoint; the session id lives only in the browser's cookie and the store
 * keeps its SHA-256, so any instance sharing the store accepts it and a copy of the store signs
 * no one in. Each session carries a form token that every state-changing request must repeat.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/repositories.js';
import type { AuthenticationService } from './authentication.js';
import type { Principal } from './principal.js';

/** A session ends this long after sign-in. */
export const WEB_SESSION_LIFE_MS = 12 * 3_600_000;

export interface WebSession {
  principal: Principal;
  /** The form token of the session (compared with {@link sameFormToken}). */
  csrfToken: string;
  expiresAt: number;
}

export interface WebSessionDeps {
  store: Store;
  authentication: Pick<AuthenticationService, 'authenticateBasic'>;
  now: () => number;
}

const hashOf = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');
const randomToken = () => randomBytes(32).toString('base64url');

/** Constant-time comparison of a submitted form token with the session's. */
export function sameFormToken(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export class WebSessionService {
  constructor(private readonly deps: WebSessionDeps) {}

  /** Checks the password (rate limited like the token endpoint) and opens a session; returns its id for the cookie. */
  async signIn(userName: string, password: string, clientAddress: string): Promise<{ sessionId: string; session: WebSession }> {
    const principal = await this.deps.authentication.authenticateBasic(userName, password, clientAddress);
    const now = this.deps.now();
    const sessionId = randomToken();
    const csrfToken = randomToken();
    const expiresAt = now + WEB_SESSION_LIFE_MS;
    await this.deps.store.webSessions.pruneExpired(now);
    await this.deps.store.webSessions.insert({ idHash: hashOf(sessionId), userName: principal.userName, csrfToken, createdAt: now, expiresAt });
    return { sessionId, session: { principal: { userName: principal.userName, isAdmin: principal.isAdmin }, csrfToken, expiresAt } };
  }

  /** The session of a cookie value, or undefined when it is unknown, expired or ended. */
  async resolve(sessionId: string | undefined): Promise<WebSession | undefined> {
    if (!sessionId || sessionId.length > 256) return undefined;
    const found = await this.deps.store.webSessions.findValid(hashOf(sessionId), this.deps.now());
    if (!found) return undefined;
    return { principal: { userName: found.session.userName, isAdmin: found.userIsAdmin }, csrfToken: found.session.csrfToken, expiresAt: found.session.expiresAt };
  }

  async signOut(sessionId: string): Promise<void> {
    await this.deps.store.webSessions.delete(hashOf(sessionId));
  }
}
