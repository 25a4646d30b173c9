/**
 * Limits failed BasicAuth attempts per scope key over a sliding minute. Attempts live in the store, so
 * every instance of the service sees the same ones.
 *
 * An attempt is written `pending` before its password is checked, turned `failed` after a wrong one and
 * removed after a right one. It may go to the check while the key's failures plus the pending attempts
 * numbered before it stay under the limit: attempts are numbered in commit order, so however many arrive
 * at once, on any number of instances, at most `limit` of them per key can fail in a window. When the
 * failures alone are at the limit the attempt is refused; when only attempts still being checked stand
 * in its way it waits for them (a right password frees its place at once), so right passwords that arrive
 * together take turns instead of being refused. A pending attempt of an instance that died counts as
 * failed once it is older than any check can take.
 */
import type { AuthFailureRepository } from '../store/repositories.js';

export interface LimitScope {
  key: string;
  /** Failed attempts allowed per window for this key; the next one is refused. */
  limit: number;
}

export type Admission =
  | {
      admitted: true;
      /** The credentials were right: the attempt stops counting. */
      succeeded(): Promise<void>;
      /** The credentials were wrong: the attempt counts for the rest of the window. */
      failed(): Promise<void>;
      /** The check could not be made (the store failed): the attempt stops counting. */
      abandoned(): Promise<void>;
    }
  | { admitted: false; reason: 'failures' | 'busy'; retryAfterSeconds: number };

export interface LoginLimiterTimes {
  windowMs: number;
  /** A pending attempt older than this was cut short and counts as failed. */
  staleMs: number;
  /** Longest wait for the attempts ahead to be checked; then the attempt is refused as `busy`. */
  maxWaitMs: number;
  /** Pause between two looks at the attempts ahead. */
  pollMs: number;
}

const DEFAULT_TIMES: LoginLimiterTimes = { windowMs: 60_000, staleMs: 30_000, maxWaitMs: 10_000, pollMs: 20 };

export class FailedLoginLimiter {
  private readonly times: LoginLimiterTimes;

  constructor(
    private readonly attempts: AuthFailureRepository,
    times: Partial<LoginLimiterTimes> = {},
  ) {
    this.times = { ...DEFAULT_TIMES, ...times };
  }

  async admit(scopes: readonly LimitScope[], now: () => number): Promise<Admission> {
    const { windowMs, staleMs, maxWaitMs, pollMs } = this.times;
    const seqs = await this.attempts.begin(scopes.map((s) => s.key), now());
    const waitUntil = performance.now() + maxWaitMs;
    for (;;) {
      const nowMs = now();
      const times = { since: nowMs - windowMs, staleBefore: nowMs - staleMs };
      let retryAfterMs = 0;
      let blocked = false;
      for (const [i, scope] of scopes.entries()) {
        const standing = await this.attempts.standing(scope.key, seqs[i]!, times);
        if (standing.failed >= scope.limit) retryAfterMs = Math.max(retryAfterMs, (standing.oldestFailed ?? nowMs) + windowMs - nowMs);
        else if (standing.failed + standing.pendingBefore >= scope.limit) blocked = true;
      }
      if (retryAfterMs > 0) {
        await this.attempts.remove(seqs);
        return { admitted: false, reason: 'failures', retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
      }
      if (!blocked) break;
      if (performance.now() >= waitUntil) {
        await this.attempts.remove(seqs);
        return { admitted: false, reason: 'busy', retryAfterSeconds: 1 };
      }
      // Spread out, so that waiting attempts do not look all at the same moment.
      await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
    }
    // Old rows go now and then, not on every attempt.
    if (Math.random() < 0.05) await this.attempts.pruneBefore(now() - windowMs);
    return {
      admitted: true,
      succeeded: () => this.attempts.remove(seqs),
      failed: () => this.attempts.fail(seqs, now()),
      abandoned: () => this.attempts.remove(seqs),
    };
  }
}
