import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FailedLoginLimiter } from '../../../src/auth/rate-limit.js';
import { openTestSqlite, type OpenedStore } from '../../support/stores.js';

describe('FailedLoginLimiter over the store', () => {
  let opened: OpenedStore;
  beforeEach(async () => {
    opened = await openTestSqlite();
  });
  afterEach(() => opened.dispose());

  const scopes = [{ key: 'ip:10.0.0.1', limit: 2 }];

  it('lets an attempt wait for pending ones ahead of it, and refuses it as busy when they take too long', async () => {
    const limiter = new FailedLoginLimiter(opened.store.authFailures, { maxWaitMs: 60, pollMs: 5 });
    const first = await limiter.admit(scopes, () => 1_000);
    const second = await limiter.admit(scopes, () => 1_000);
    expect([first.admitted, second.admitted]).toEqual([true, true]);
    // Two pending ahead and no failure: the third waits, and gets in once one of them succeeds.
    const third = limiter.admit(scopes, () => 1_000);
    if (first.admitted) await first.succeeded();
    expect((await third).admitted).toBe(true);
    // Now two are pending again (second and third); the fourth waits in vain.
    expect(await limiter.admit(scopes, () => 1_000)).toEqual({ admitted: false, reason: 'busy', retryAfterSeconds: 1 });
  });

  it('counts the pending attempts of an instance that died as failed once they are stale', async () => {
    // Two attempts begun and never finished.
    await opened.store.authFailures.begin(['ip:10.0.0.1'], 1_000);
    await opened.store.authFailures.begin(['ip:10.0.0.1'], 1_000);
    const limiter = new FailedLoginLimiter(opened.store.authFailures, { maxWaitMs: 30, pollMs: 5, staleMs: 30_000 });
    expect(await limiter.admit(scopes, () => 20_000)).toMatchObject({ admitted: false, reason: 'busy' });
    // Stale after 30 s: failures now, so refused until the minute since they began has passed.
    expect(await limiter.admit(scopes, () => 32_000)).toEqual({ admitted: false, reason: 'failures', retryAfterSeconds: 29 });
    expect((await limiter.admit(scopes, () => 61_000)).admitted).toBe(true);
  });
});
