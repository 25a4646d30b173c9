/**
 * The live stream's reads (`GET /events`, server-sent events): the caller's wallets' events in order, from
 * the one after `Last-Event-ID` (the event's seq) or, without it, from now on. New events come from the
 * process's one LiveFeed; a stream reads the store itself only to catch up from an older `Last-Event-ID`.
 */
import type { StoredEvent, Store } from '../../store/repositories.js';
import { invalidField, unauthenticated } from '../errors.js';
import type { Principal } from '../principal.js';
import type { WalletAccess } from '../wallets/access.js';
import { readFeed } from './feed.js';
import { LiveFeed, type FeedBatch } from './live-feed.js';

const PAGE = 200;
/**
 * A stream outlives its request's authentication: its token and wallets are looked at again before any of
 * its wallets' events go out, and otherwise this often (so a deleted token ends an idle stream, and a wallet
 * shared with the caller meanwhile is seen). 200 idle streams cost the store 80 small reads a second.
 */
const RECHECK_MS = 5_000;

interface StreamDeps {
  store: Store;
  access: Pick<WalletAccess, 'readable'>;
  now: () => number;
}

export class EventStreamService {
  private readonly feed: LiveFeed;

  constructor(private readonly deps: StreamDeps) {
    this.feed = new LiveFeed(deps.store);
  }

  /** Where a stream starts: after `lastEventId`, or after the newest event. 403 without `wallets:read`. */
  async start(principal: Principal, lastEventId: string | undefined): Promise<number> {
    await this.deps.access.readable(principal);
    if (lastEventId === undefined || lastEventId.trim() === '') return this.deps.store.events.lastSeq();
    if (!/^\d{1,15}$/.test(lastEventId.trim())) throw invalidField('/headers/last-event-id', 'must be the id of an event of this stream');
    return Number(lastEventId.trim());
  }

  /** The caller's events after `cursor`, as they come; close it when the stream ends. */
  subscribe(principal: Principal, cursor: number): EventSubscription {
    return new EventSubscription(this.deps, this.feed, principal, cursor);
  }
}

export class EventSubscription {
  private readonly batches: FeedBatch[] = [];
  private wake: (() => void) | undefined;
  private readonly stopListening: () => void;
  private closed = false;
  private wallets = new Set<string>();
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: StreamDeps,
    private readonly feed: LiveFeed,
    private readonly principal: Principal,
    private cursor: number,
  ) {
    this.stopListening = feed.listen((batch) => {
      this.batches.push(batch);
      this.wake?.();
    });
  }

  /**
   * The next events of the caller's wallets, or none once `idleMs` passed without any (or the subscription
   * closed). Throws when the token was deleted or expired, or lost `wallets:read`, meanwhile.
   */
  async next(idleMs: number): Promise<StoredEvent[]> {
    const idleUntil = performance.now() + idleMs;
    while (!this.closed) {
      const batch = this.batches[0];
      if (batch !== undefined && batch.after <= this.cursor) {
        this.batches.shift();
        if (batch.upTo <= this.cursor) continue;
        const unseen = batch.events.filter((e) => e.seq > this.cursor);
        if (unseen.some((e) => this.wallets.has(e.walletId))) await this.check(0);
        else if (unseen.length > 0) await this.check(RECHECK_MS);
        this.cursor = batch.upTo;
        const events = unseen.filter((e) => this.wallets.has(e.walletId));
        if (events.length > 0) return events;
        continue;
      }
      const feedPosition = this.feed.position;
      if (batch !== undefined || (feedPosition !== undefined && this.cursor < feedPosition)) {
        // Behind the feed (an older Last-Event-ID, or a stream opened before the feed's first look): catch up.
        await this.check(0);
        const page = await readFeed(this.deps.store, this.cursor, [...this.wallets], PAGE);
        this.cursor = page.cursor;
        if (page.events.length > 0) return page.events;
        continue;
      }
      const waitMs = idleUntil - performance.now();
      if (waitMs <= 0) {
        await this.check(RECHECK_MS);
        return [];
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return [];
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopListening();
    this.wake?.();
  }

  /** Looks at the token and the wallets the caller reaches now, unless done within `maxAgeMs`. */
  private async check(maxAgeMs: number): Promise<void> {
    if (performance.now() - this.checkedAt < maxAgeMs) return;
    const { principal, deps } = this;
    if (principal.tokenId !== undefined) {
      const token = await deps.store.tokens.findWithUser(principal.tokenId);
      if (!token || token.token.expiresAt <= deps.now()) throw unauthenticated('Bearer');
    }
    this.wallets = new Set((await deps.access.readable(principal)).map((w) => w.id));
    this.checkedAt = performance.now();
  }
}
