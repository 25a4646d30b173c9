/**
 * One reader of the outbox per process for every open event stream: it looks for new events every
 * `pollMs` while anyone listens and hands each page of them, of all wallets, to every listener, which keeps
 * those of its own wallets. So an open stream costs the store nothing while no event comes: 200 streams
 * poll the store as often as one does.
 */
import type { StoredEvent, Store } from '../../store/repositories.js';

/** Every event after `after` up to `upTo` (inclusive), oldest first. */
export interface FeedBatch {
  after: number;
  upTo: number;
  events: StoredEvent[];
}

export type FeedListener = (batch: FeedBatch) => void;

export class LiveFeed {
  private readonly listeners = new Set<FeedListener>();
  /** The last seq read; undefined until the first look after a listener came. */
  private cursor: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: Store,
    private readonly pollMs = 500,
    private readonly page = 200,
  ) {}

  /** How far the feed has read: a listener behind it reads the gap itself. Undefined before its first look. */
  get position(): number | undefined {
    return this.cursor;
  }

  /** The listener gets every batch read from now on; call the returned function to stop. */
  listen(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (this.timer === undefined) this.schedule(0);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0 || this.timer === undefined) return;
      clearTimeout(this.timer);
      this.timer = undefined;
      // Nobody listened for a while: the next listener starts from a fresh look.
      this.cursor = undefined;
    };
  }

  private schedule(delayMs: number): void {
    const timer = setTimeout(() => {
      void this.look().then(() => {
        // Unless the listeners all left (and maybe others came, with a look of their own) meanwhile.
        if (this.timer === timer) this.schedule(this.pollMs);
      });
    }, delayMs);
    timer.unref();
    this.timer = timer;
  }

  private async look(): Promise<void> {
    try {
      const last = await this.store.events.lastSeq();
      if (this.cursor === undefined) {
        this.cursor = last;
        // Listeners that came before the first look learn where the feed starts (one behind it catches up).
        for (const listener of this.listeners) listener({ after: last, upTo: last, events: [] });
      }
      let after = this.cursor;
      while (after < last && this.listeners.size > 0) {
        const events = await this.store.events.listAfter(after, undefined, this.page, last);
        // Everyone left (or another look moved on) meanwhile: this look is over.
        if (this.cursor !== after) return;
        const batch: FeedBatch = { after, upTo: events.length === this.page ? events.at(-1)!.seq : last, events };
        this.cursor = after = batch.upTo;
        for (const listener of this.listeners) listener(batch);
      }
    } catch {
      // The store failing: each stream finds out on its own next check and ends; the feed tries again.
    }
  }
}
