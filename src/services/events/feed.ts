/**
 * Reading the outbox in order. Event seqs grow in commit order without gaps, so every event up to the
 * sequence's value read first is already committed: a reader that moves its cursor to that value misses
 * nothing, on any number of instances.
 */
import type { StoredEvent, Store } from '../../store/repositories.js';

export interface FeedPage {
  events: StoredEvent[];
  /** Where the next read starts. */
  cursor: number;
}

export async function readFeed(store: Store, after: number, walletIds: readonly string[], limit: number): Promise<FeedPage> {
  const last = await store.events.lastSeq();
  if (last <= after) return { events: [], cursor: after };
  const events = await store.events.listAfter(after, walletIds, limit, last);
  return { events, cursor: events.length === limit ? events.at(-1)!.seq : last };
}
