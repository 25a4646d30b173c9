/** Token use cases: create (value shown once, only its hash kept), list, read and delete own tokens. */
import { randomUUID } from 'node:crypto';
import { parseDuration } from '../auth/duration.js';
import { tokenHash, type JwtCodec } from '../auth/jwt.js';
import { StoreConflictError, type Store, type TokenRecord } from '../store/repositories.js';
import { ServiceError, invalidField } from './errors.js';
import { PERMISSIONS, isPermission, type Permission } from './permissions.js';
import type { Principal } from './principal.js';
import { checkText } from './wallet-input.js';
import type { WalletAccess } from './wallets/access.js';

export const DESCRIPTION_MAX_CHARS = 256;

export interface CreateTokenInput {
  description: string;
  /** Duration text, or a JSON number of seconds. */
  life: string | number;
  /** Beyond the contract: limit the token to these permissions (absent: all of the user's rights). */
  permissions?: unknown;
  /** Beyond the contract: limit the token to these wallet aliases (absent: every wallet of the user). */
  wallets?: unknown;
}

/** What a narrowed token is limited to; both absent for a token with all of its user's rights. */
export interface TokenLimits {
  permissions?: Permission[];
  /** Aliases (of wallets that still exist and the user still reaches). */
  wallets?: string[];
}

export interface CreatedToken {
  id: string;
  token: string;
  description: string;
  lifeSeconds: number;
  limits: TokenLimits;
}

export interface TokenView {
  id: string;
  description: string;
  lifeSeconds: number;
  /** Float seconds, 0 once expired. */
  remainingSeconds: number;
  expiryStatus: 'Valid' | 'Expired';
  limits: TokenLimits;
}

export interface TokenServiceDeps {
  store: Store;
  jwt: JwtCodec;
  maxLifeSeconds: number;
  now: () => number;
  wallets: Pick<WalletAccess, 'reachable'>;
}

export class TokenService {
  constructor(private readonly deps: TokenServiceDeps) {}

  async createToken(principal: Principal, input: CreateTokenInput): Promise<CreatedToken> {
    const description = input.description.trim();
    const descriptionLength = [...description].length;
    if (descriptionLength < 1 || descriptionLength > DESCRIPTION_MAX_CHARS) {
      throw invalidField('/jwt_token_description', `must be 1 to ${DESCRIPTION_MAX_CHARS} characters (after trimming)`);
    }
    checkText(description, '/jwt_token_description');
    // A number is a count of seconds: the same as its text without a unit (a whole number).
    const life = parseDuration(typeof input.life === 'number' ? String(input.life) : input.life, this.deps.maxLifeSeconds);
    if (!life.ok) throw invalidField('/jwt_token_life', life.reason);
    const permissions = parsePermissions(input.permissions);
    const walletIds = await this.walletIdsOf(principal, input.wallets);

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
      ...(permissions ? { permissions } : {}),
      ...(walletIds ? { walletIds } : {}),
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
    return { id, token, description, lifeSeconds: life.seconds, limits: await this.limitsOf(principal, record) };
  }

  async listTokens(principal: Principal): Promise<TokenView[]> {
    const nowMs = this.deps.now();
    const records = await this.deps.store.tokens.listForUser(principal.userName);
    return Promise.all(records.map(async (t) => view(t, nowMs, await this.limitsOf(principal, t))));
  }

  async getToken(principal: Principal, id: string): Promise<TokenView> {
    const record = await this.deps.store.tokens.findForUser(principal.userName, id);
    if (!record) throw tokenNotFound();
    return view(record, this.deps.now(), await this.limitsOf(principal, record));
  }

  /** Aliases -> ids of wallets the user reaches; a token never reaches more than its user. */
  private async walletIdsOf(principal: Principal, wallets: unknown): Promise<string[] | undefined> {
    if (wallets === undefined) return undefined;
    if (!Array.isArray(wallets) || wallets.length === 0 || wallets.length > 1000 || !wallets.every((w) => typeof w === 'string')) {
      throw invalidField('/wallets', 'must be a non-empty list of wallet aliases');
    }
    const reachable = new Map((await this.deps.wallets.reachable(principal)).map((w) => [w.alias, w.id]));
    return [...new Set(wallets as string[])].map((alias) => {
      const id = reachable.get(alias);
      if (id === undefined) throw invalidField(`/wallets/${wallets.indexOf(alias)}`, `"${alias.slice(0, 64)}" is not a wallet you can access`);
      return id;
    });
  }

  private async limitsOf(principal: Principal, record: TokenRecord): Promise<TokenLimits> {
    const limits: TokenLimits = {};
    if (record.permissions) limits.permissions = record.permissions.filter(isPermission);
    if (record.walletIds) {
      const ids = new Set(record.walletIds);
      limits.wallets = (await this.deps.wallets.reachable({ userName: principal.userName, isAdmin: principal.isAdmin })).filter((w) => ids.has(w.id)).map((w) => w.alias);
    }
    return limits;
  }

  /** Deletes the caller's token; it is refused from this moment on every instance. */
  async deleteToken(principal: Principal, id: string): Promise<void> {
    if (!(await this.deps.store.tokens.deleteForUser(principal.userName, id))) throw tokenNotFound();
  }
}

function parsePermissions(value: unknown): Permission[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalidField('/permissions', `must be a list of permissions (${PERMISSIONS.join(', ')})`);
  const unknown = value.findIndex((p) => !isPermission(p));
  if (unknown >= 0) throw invalidField(`/permissions/${unknown}`, `must be one of ${PERMISSIONS.join(', ')}`);
  return [...new Set(value as Permission[])];
}

function view(record: TokenRecord, nowMs: number, limits: TokenLimits): TokenView {
  const remainingSeconds = Math.max(0, (record.expiresAt - nowMs) / 1000);
  return {
    id: record.id,
    description: record.description,
    lifeSeconds: record.lifeSeconds,
    remainingSeconds,
    expiryStatus: remainingSeconds > 0 ? 'Valid' : 'Expired',
    limits,
  };
}

function tokenNotFound(): ServiceError {
  return new ServiceError('not_found', 'token_not_found', 'Token not found');
}
