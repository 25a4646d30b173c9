/**
 * Requests per authenticated user: a token bucket per user name, in this process (so with several
 * instances behind a load balancer a user may get up to that many times the rate). It runs after
 * authentication and before the body is read; an empty bucket answers 429 `too_many_requests`.
 */
import type { FastifyInstance, preParsingHookHandler } from 'fastify';
import { ServiceError } from '../services/errors.js';
import { prependRouteHook } from './route-hooks.js';
import { errorResponses } from './schemas.js';

interface Bucket {
  tokens: number;
  /** Epoch milliseconds of the last refill. */
  at: number;
}

export class UserRequestLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    /** Tokens added per second; 0 turns the limit off. */
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** False when the rate is 0: no request is ever refused. */
  get enabled(): boolean {
    return this.ratePerSecond > 0;
  }

  /** Takes one token for `user`: 0 when granted, else the seconds until one is there. */
  take(user: string): number {
    if (!this.enabled) return 0;
    const now = this.now();
    const bucket = this.buckets.get(user) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(user, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }
}

/**
 * Install before the routes (and before the OpenAPI generator): every /api route may answer 429.
 * The check itself is a hook of the /api routes only, and none at all while the limit is off.
 */
export function installUserRateLimit(app: FastifyInstance, limiter: UserRequestLimiter): void {
  // preParsing runs after every onRequest hook (authentication among them) and before the body is read.
  // Callback style: it runs on every request, and an async hook costs a promise each.
  const limit: preParsingHookHandler = (request, _reply, payload, done) => {
    const user = request.principal?.userName;
    const wait = user === undefined ? 0 : limiter.take(user);
    if (wait > 0) return done(new ServiceError('rate_limited', 'too_many_requests', 'Too many requests; slow down', { retryAfterSeconds: wait }));
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/')) return;
    if (limiter.enabled) route.preParsing = prependRouteHook(route.preParsing, limit);
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (response === undefined || '429' in response) return;
    route.schema = { ...route.schema, response: { ...response, ...errorResponses(429) } };
  });
}
