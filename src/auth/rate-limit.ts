/**
 * Limits failed BasicAuth attempts per scope key (client address, user name) over a sliding
 * minute. Counters live in the store, so every instance of the service sees the same ones.
 */
import type { AuthFailureRepository } from '../store/repositories.js';

export type LimitDecision = { limited: false } | { limited: true; retryAfterSeconds: number };

export class FailedLoginLimiter {
  constructor(
    private readonly failures: AuthFailureRepository,
    /** Failures allowed per window; the next attempt is refused. */
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  async check(scopeKeys: readonly string[], nowMs: number): Promise<LimitDecision> {
    let retryAfterMs = 0;
    for (const key of scopeKeys) {
      const { count, oldest } = await this.failures.countSince(key, nowMs - this.windowMs);
      if (count >= this.limit && oldest !== undefined) retryAfterMs = Math.max(retryAfterMs, oldest + this.windowMs - nowMs);
    }
    return retryAfterMs > 0 ? { limited: true, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) } : { limited: false };
  }

  async recordFailure(scopeKeys: readonly string[], nowMs: number): Promise<void> {
    await this.failures.record(scopeKeys, nowMs);
    await this.failures.pruneBefore(nowMs - this.windowMs);
  }
}
