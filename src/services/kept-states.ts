/**
 * What the reads keep loaded, least recently read first, within three bounds: how many (`wallet_states_kept`), what
 * they weigh together (`wallet_states_budget`, in transactions plus coins: a count of states does not bound memory,
 * one wallet of 200,000 transactions weighing as much as tens of thousands of small ones) and how long one stays
 * unread (`wallet_states_idle`). Dropping an entry only forgets it here: whoever holds its value keeps it valid.
 */

export interface KeepingBounds {
  /** Entries kept at most. */
  count: number;
  /** Weight kept at most (the entry just kept stays, whatever it weighs). */
  budget: number;
  /** Milliseconds an entry stays unread before it is dropped; 0: never dropped for that. */
  idleMs: number;
}

interface Entry<T> {
  value: T;
  weight: number;
  /** When last read (monotonic milliseconds). */
  readAt: number;
}

/** Longest wait between two looks for idle entries (a state unread for `idleMs` is gone at most this much later). */
const IDLE_CHECK_MAX_MS = 60_000;

export class KeptStates<T> {
  /** In the order last read: a read moves its entry last, so `readAt` grows along the map. */
  private readonly entries = new Map<string, Entry<T>>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly bounds: KeepingBounds,
    private readonly clock: () => number = () => performance.now(),
    /** Told each entry dropped or replaced, whatever the cause. */
    private readonly dropped?: (id: string, value: T) => void,
  ) {}

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  /** Marks the entry read now (kept longest). */
  touch(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    entry.readAt = this.clock();
    this.entries.set(id, entry);
  }

  /**
   * Keeps `value` for `id` (replacing what was kept), read now and weighing `weight`, then drops the least recently
   * read others while past the count or the budget.
   */
  keep(id: string, value: T, weight: number): void {
    const before = this.entries.get(id);
    if (before?.value === value) {
      this.entries.delete(id); // weighed again: not dropped
      this.total -= before.weight;
    } else this.delete(id);
    this.entries.set(id, { value, weight, readAt: this.clock() });
    this.total += weight;
    for (const [other, entry] of this.entries) {
      if (this.entries.size <= this.bounds.count && this.total <= this.bounds.budget) break;
      if (other !== id) this.remove(other, entry);
    }
    this.watchIdle();
  }

  /** Keeps the new weight of the entry kept for `id` with `value` (nothing when another, or none, is kept). */
  reweigh(id: string, value: T, weight: number): void {
    if (this.entries.get(id)?.value === value) this.keep(id, value, weight);
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry) this.remove(id, entry);
  }

  /** Drops the entries unread for the idle time: a look at the first entry when none is. */
  dropIdle(): void {
    if (this.bounds.idleMs <= 0) return;
    const before = this.clock() - this.bounds.idleMs;
    for (const [id, entry] of this.entries) {
      if (entry.readAt > before) break;
      this.remove(id, entry);
    }
  }

  /** Ids kept, least recently read first. */
  ids(): string[] {
    return [...this.entries.keys()];
  }

  /** What the entries kept weigh together. */
  weight(): number {
    return this.total;
  }

  /** Stops looking for idle entries (the service is stopping). */
  stop(): void {
    this.stopped = true;
    this.stopTimer();
  }

  private remove(id: string, entry: Entry<T>): void {
    this.entries.delete(id);
    this.total -= entry.weight;
    if (this.entries.size === 0) this.stopTimer();
    this.dropped?.(id, entry.value);
  }

  /** Looks for idle entries now and then while some are kept; the timer never keeps the process running. */
  private watchIdle(): void {
    if (this.timer || this.stopped || this.bounds.idleMs <= 0) return;
    this.timer = setInterval(() => this.dropIdle(), Math.min(this.bounds.idleMs, IDLE_CHECK_MAX_MS));
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
