/** Token use cases: create (value shown once, only its hash kept), list, read and delete own tokens. */
import { randomUUID } from 'node:crypto';
import { parseDuration } from '../auth/duration.js';
import { tokenHash, type JwtCodec } from '../auth/jwt.js';
import { StoreConflictError, type Store, type TokenRecord } from '../store/repositories.js';
import { ServiceError, invalidField } from './errors.js';
import type { Principal } from './principal.js';

export const DESCRIPTION_MAX_CHARS = 256;

export interface CreateTokenInput {
  description: string;
  /** Duration text, or a JSON number of seconds. */
  life: string | number;
}

export interface CreatedToken {
  id: string;
  token: string;
  description: string;
  lifeSeconds: number;
}

export interface TokenView {
  id: string;
  description: string;
  lifeSeconds: number;
  /** Float seconds, 0 once expired. */
  remainingSeconds: number;
  expiryStatus: 'Valid' | 'Expired';
}

export interface TokenServiceDeps {
  store: Store;
  jwt: JwtCodec;
  maxLifeSeconds: number;
  now: () => number;
}

export class TokenService {
  constructor(private readonly deps: TokenServiceDeps) {}

  async createToken(principal: Principal, input: CreateTokenInput): Promise<CreatedToken> {
    const description = input.description.trim();
    const descriptionLength = [...description].length;
    if (descriptionLength < 1 || descriptionLength > DESCRIPTION_MAX_CHARS) {
      throw invalidField('/jwt_token_description', `must be 1 to ${DESCRIPTION_MAX_CHARS} characters (after trimming)`);
    }
    // A number is a count of seconds: the same as its text without a unit (a whole number).
    const life = parseDuration(typeof input.life === 'number' ? String(input.life) : input.life, this.deps.maxLifeSeconds);
    if (!life.ok) throw invalidField('/jwt_token_life', life.reason);

    const nowMs = this.deps.now();
    const iat = Math.floor(nowMs / 1000);
    const id = randomUUID();
    const token = await this.deps.jwt.sign({ sub: principal.userName, jti: id, iat, exp: iat + life.seconds });
    const record: TokenRecord = {
      id,
      userName: principal.userName,
      description,
      tokenHash: tokenHash(token),
      lifeSeconds: life.seconds,
      createdAt: nowMs,
      expiresAt: (iat + life.seconds) * 1000,
    };
    try {
      await this.deps.store.tokens.insert(record);
    } catch (error) {
      if (error instanceof StoreConflictError) {
        throw new ServiceError('conflict', 'duplicate_token_description', 'A token with this description already exists', {
          errors: [{ path: '/jwt_token_description', message: 'is already used by another of your tokens' }],
        });
      }
      throw error;
    }
    return { id, token, description, lifeSeconds: life.seconds };
  }

  async listTokens(principal: Principal): Promise<TokenView[]> {
    const nowMs = this.deps.now();
    return (await this.deps.store.tokens.listForUser(principal.userName)).map((t) => view(t, nowMs));
  }

  async getToken(principal: Principal, id: string): Promise<TokenView> {
    const record = await this.deps.store.tokens.findForUser(principal.userName, id);
    if (!record) throw tokenNotFound();
    return view(record, this.deps.now());
  }

  /** Deletes the caller's token; it is refused from this moment on every instance. */
  async deleteToken(principal: Principal, id: string): Promise<void> {
    if (!(await this.deps.store.tokens.deleteForUser(principal.userName, id))) throw tokenNotFound();
  }
}

function view(record: TokenRecord, nowMs: number): TokenView {
  const remainingSeconds = Math.max(0, (record.expiresAt - nowMs) / 1000);
  return {
    id: record.id,
    description: record.description,
    lifeSeconds: record.lifeSeconds,
    remainingSeconds,
    expiryStatus: remainingSeconds > 0 ? 'Valid' : 'Expired',
  };
}

function tokenNotFound(): ServiceError {
  return new ServiceError('not_found', 'token_not_found', 'Token not found');
}
