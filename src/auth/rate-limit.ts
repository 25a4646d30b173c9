/**
 * Limits BasicAuth attempts per scope key over a sliding minute. Counters live in the store, so
 * every instance of the service sees the same ones.
 *
 * An attempt is counted before its password is checked: its rows are written (each committed on
 * its own) and then counted. The k-th row written for a key sees at least k rows, so however many
 * attempts arrive at once, at most `limit` of them per key get to the password check in a window.
 * A refused attempt's rows are removed again, so refusals do not extend a lock; an attempt whose
 * password was right gives its rows back, so only failures stay counted.
 */
import type { AuthFailureRepository } from '../store/repositories.js';

export interface LimitScope {
  key: string;
  /** Attempts allowed per window for this key; the next one is refused. */
  limit: number;
}

export type Admission =
  | { admitted: true; /** Call when the credentials were right: the attempt stops counting. */ succeeded(): Promise<void> }
  | { admitted: false; retryAfterSeconds: number };

export class FailedLoginLimiter {
  constructor(
    private readonly failures: AuthFailureRepository,
    private readonly windowMs = 60_000,
  ) {}

  async admit(scopes: readonly LimitScope[], nowMs: number): Promise<Admission> {
    const since = nowMs - this.windowMs;
    const ids = await this.failures.record(scopes.map((s) => s.key), nowMs);
    let retryAfterMs = 0;
    for (const scope of scopes) {
      const { count, oldest } = await this.failures.countSince(scope.key, since);
      if (count > scope.limit) retryAfterMs = Math.max(retryAfterMs, (oldest ?? nowMs) + this.windowMs - nowMs);
    }
    if (retryAfterMs > 0) {
      await this.failures.remove(ids);
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
    }
    // Old rows go now and then, not on every attempt.
    if (Math.random() < 0.05) await this.failures.pruneBefore(since);
    return { admitted: true, succeeded: () => this.failures.remove(ids) };
  }
}
