/**
 * The live stream's reads (`GET /events`, server-sent events): the caller's wallets' events in order, from
 * the one after `Last-Event-ID` (the event's seq) or, without it, from now on.
 */
import type { Store } from '../../store/repositories.js';
import { invalidField, unauthenticated } from '../errors.js';
import { requirePermission } from '../permissions.js';
import type { Principal } from '../principal.js';
import type { WalletAccess } from '../wallets/access.js';
import { readFeed, type FeedPage } from './feed.js';

const PAGE = 200;

export class EventStreamService {
  constructor(private readonly deps: { store: Store; access: Pick<WalletAccess, 'readable'>; now: () => number }) {}

  /** Where a stream starts: after `lastEventId`, or after the newest event. 403 without `wallets:read`. */
  async start(principal: Principal, lastEventId: string | undefined): Promise<number> {
    await this.deps.access.readable(principal);
    if (lastEventId === undefined || lastEventId.trim() === '') return this.deps.store.events.lastSeq();
    if (!/^\d{1,15}$/.test(lastEventId.trim())) throw invalidField('/headers/last-event-id', 'must be the id of an event of this stream');
    return Number(lastEventId.trim());
  }

  /** The next events after `cursor` of the wallets the caller reaches now (access may change while it listens). */
  async next(principal: Principal, cursor: number): Promise<FeedPage> {
    // A stream outlives its request's authentication: a token deleted or expired since ends it.
    if (principal.tokenId !== undefined) {
      const token = await this.deps.store.tokens.findWithUser(principal.tokenId);
      if (!token || token.token.expiresAt <= this.deps.now()) throw unauthenticated('Bearer');
    }
    requirePermission(principal, 'wallets:read');
    const wallets = await this.deps.access.readable(principal);
    return readFeed(this.deps.store, cursor, wallets.map((w) => w.id), PAGE);
  }
}
