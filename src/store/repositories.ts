/**
 * What the services may ask of persistence. SQLite and PostgreSQL implement the same interfaces
 * (one Kysely implementation, two dialects); nothing that must hold across service instances
 * lives in process memory.
 */

export interface UserRecord {
  name: string;
  passwordHash: string;
  isAdmin: boolean;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface UserRepository {
  count(): Promise<number>;
  find(name: string): Promise<UserRecord | undefined>;
  list(): Promise<UserRecord[]>;
  /** Throws StoreConflictError when the name is taken. */
  insert(user: UserRecord): Promise<void>;
  /** False when no such user. */
  updatePasswordHash(name: string, passwordHash: string): Promise<boolean>;
  /** False when no such user. */
  setAdmin(name: string, isAdmin: boolean): Promise<boolean>;
  /**
   * In a transaction: takes the write lock on every admin row (waiting for a concurrent admin change to end) and
   * returns how many admins there are then, so "not the last admin" checks cannot both pass.
   */
  lockAdmins(): Promise<number>;
  /** Deletes the user and, by cascade, their tokens. False when no such user. */
  delete(name: string): Promise<boolean>;
}

export interface TokenRecord {
  /** UUID, the JWT's `jti`. */
  id: string;
  userName: string;
  description: string;
  /** SHA-256 (hex) of the JWT text; the token itself is never stored. */
  tokenHash: string;
  lifeSeconds: number;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** Permissions the token is limited to; absent: all of its user's rights. */
  permissions?: string[];
  /** Wallet ids the token is limited to; absent: every wallet its user can reach. */
  walletIds?: string[];
}

export interface TokenRepository {
  /** Throws StoreConflictError when the user already has a token with this description. */
  insert(token: TokenRecord): Promise<void>;
  findForUser(userName: string, id: string): Promise<TokenRecord | undefined>;
  /** Oldest first. */
  listForUser(userName: string): Promise<TokenRecord[]>;
  /** The token and its user's admin flag, in one read (the Bearer path). */
  findWithUser(id: string): Promise<{ token: TokenRecord; userIsAdmin: boolean } | undefined>;
  /** False when the user has no token with this id. */
  deleteForUser(userName: string, id: string): Promise<boolean>;
  deleteAllForUser(userName: string): Promise<number>;
}

/**
 * Login attempts per scope key (a client address, or an address and a user name): `pending` while the
 * password is checked, then `failed`, or removed when it was right.
 */
export interface AuthFailureRepository {
  /**
   * One pending attempt per key, begun at `at`, written and committed together; returns their numbers in
   * key order. Numbers grow in commit order: once this returns, every attempt numbered lower is visible.
   */
  begin(scopeKeys: readonly string[], at: number): Promise<number[]>;
  /** The attempts failed at `at`. */
  fail(seqs: readonly number[], at: number): Promise<void>;
  /** Forgets the attempts (the password was right, or the attempt was refused before its check). */
  remove(seqs: readonly number[]): Promise<void>;
  /** Where the key stands for the attempt numbered `seq`. */
  standing(scopeKey: string, seq: number, times: AttemptTimes): Promise<AttemptStanding>;
  /** Forgets attempts, pending or failed, from before `before`. */
  pruneBefore(before: number): Promise<void>;
}

export interface AttemptTimes {
  /** Failures from this time on count. */
  since: number;
  /** A pending attempt begun before this time was cut short (its instance died) and counts as failed. */
  staleBefore: number;
}

export interface AttemptStanding {
  /** Failures since `since`, stale pending attempts among them. */
  failed: number;
  /** Time of the oldest of them. */
  oldestFailed: number | undefined;
  /** Pending attempts, not stale, numbered below `seq`. */
  pendingBefore: number;
}

/** Name/value facts the instances sharing the database agree on (e.g. the signing key's fingerprint). */
export interface ServiceSettingRepository {
  get(name: string): Promise<string | undefined>;
  /** Writes the value unless the name has one; returns the value now stored (another instance may have been first). */
  setIfAbsent(name: string, value: string, at: number): Promise<string>;
  /** Writes the value, replacing any. */
  set(name: string, value: string, at: number): Promise<void>;
}

/** A session of the web interface; found by the hash of its id. */
export interface WebSessionRecord {
  /** SHA-256 (hex) of the session id. */
  idHash: string;
  userName: string;
  /** Token every state-changing form of the session must carry. */
  csrfToken: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface WebSessionRepository {
  insert(session: WebSessionRecord): Promise<void>;
  /** The session and its user's admin flag, in one read; undefined when absent or expired at `now`. */
  findValid(idHash: string, now: number): Promise<{ session: WebSessionRecord; userIsAdmin: boolean } | undefined>;
  /** False when no such session. */
  delete(idHash: string): Promise<boolean>;
  deleteAllForUser(userName: string): Promise<number>;
  /** Forgets sessions expired before `now`; returns how many. */
  pruneExpired(now: number): Promise<number>;
}

import type { EventRepository, WebhookRepository } from './event-records.js';
import type { PsbtRepository } from './psbt-records.js';
import type { WalletRepository } from './wallet-records.js';
import type { WalletLabelRepository } from './label-records.js';

export type * from './wallet-records.js';
export type * from './event-records.js';
export type { PsbtRepository, PsbtStatus, StoredPsbt, Outpoint, Reservation } from './psbt-records.js';
export type { StoredLabel, WalletLabelRepository } from './label-records.js';

/** What one heartbeat of an instance following wallets found (store/kysely-follow-leases.ts). */
export interface FollowLeaseState {
  /** The wallets whose leases this instance holds (renewed by the heartbeat). */
  held: string[];
  /** Instances whose heartbeat is younger than the lease time, this one included. */
  liveInstances: number;
  wallets: number;
}

/** Leases on following wallets, one holder per wallet (PostgreSQL only: one SQLite process follows every wallet). */
export interface FollowLeaseRepository {
  /** Says the instance lives, renews its leases for `ttlMs`, and counts the live instances and the wallets. */
  heartbeat(instanceId: string, ttlMs: number): Promise<FollowLeaseState>;
  /** Takes up to `count` wallets nobody holds or whose lease expired; the ones taken. */
  claim(instanceId: string, count: number, ttlMs: number): Promise<string[]>;
  /** Gives up these leases at once (all of them, and the instance's heartbeat, when no list is given). */
  release(instanceId: string, walletIds?: readonly string[]): Promise<void>;
  /**
   * In a write's transaction: locks the leases of these wallets until the commit, and fails
   * (FollowLeaseLostError) unless each still names this instance (expired and taken by nobody is still its own).
   */
  fence(instanceId: string, walletIds: readonly string[]): Promise<void>;
}

export interface Repositories {
  users: UserRepository;
  tokens: TokenRepository;
  authFailures: AuthFailureRepository;
  psbts: PsbtRepository;
  wallets: WalletRepository;
  settings: ServiceSettingRepository;
  labels: WalletLabelRepository;
  webSessions: WebSessionRepository;
  events: EventRepository;
  webhooks: WebhookRepository;
  followLeases: FollowLeaseRepository;
}

export interface Store extends Repositories {
  readonly kind: 'sqlite' | 'postgres';
  /** Runs `work` in one transaction: all of its writes happen, or none. */
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Highest applied migration. */
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/** A write that breaks a uniqueness rule (duplicate name, description, id). */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** Lost a lease while writing: another instance follows the wallet now. */
export class FollowLeaseLostError extends Error {
  constructor(readonly walletIds: readonly string[]) {
    super(`The lease on following ${walletIds.length} wallet(s) was lost to another instance`);
    this.name = 'FollowLeaseLostError';
  }
}
