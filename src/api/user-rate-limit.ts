/**
 * Requests per authenticated user, after authentication and before the body is read: each request waits
 * for one of its user's slots (UserRequestGate: fairness, never a refusal for a client that sends one
 * request at a time), and, when the operator sets `user_request_rate`, also takes a token from the user's
 * bucket (an optional hard cap, off by default). Both are kept per process.
 */
import type { FastifyInstance, preParsingHookHandler } from 'fastify';
import { ServiceError } from '../services/errors.js';
import { prependRouteHook } from './route-hooks.js';
import { errorResponses } from './schemas.js';
import type { UserRequestGate } from './user-request-gate.js';

interface Bucket {
  tokens: number;
  /** Epoch milliseconds of the last refill. */
  at: number;
}

export class UserRequestLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    /** Tokens added per second; 0 turns the cap off. */
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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A long-lived response (the event stream): it takes none of its user's request slots; it has a bound of its own. */
    longLived?: boolean;
  }
}

/** Seconds a refused client is told to wait: a slot frees as soon as one of its own requests ends. */
const LINE_RETRY_AFTER_SECONDS = 1;

/**
 * Install before the routes (and before the OpenAPI generator): every /api route may answer 429.
 * Each authenticated request takes one of its user's slots (waiting in line for one if need be) and
 * gives it back however it ends: answered, failed, timed out or its client gone.
 */
export function installUserRateLimit(app: FastifyInstance, gate: UserRequestGate, cap: UserRequestLimiter): void {
  // preParsing runs after every onRequest hook (authentication among them) and before the body is read.
  // Callback style: it runs on every request, and an async hook costs a promise each.
  const limit: preParsingHookHandler = (request, reply, payload, done) => {
    const user = request.principal?.userName;
    if (user === undefined) return done(null, payload);
    const wait = cap.take(user);
    if (wait > 0) return done(new ServiceError('rate_limited', 'too_many_requests', 'Too many requests; slow down', { retryAfterSeconds: wait }));
    const response = reply.raw;
    let settled = false;
    const leaveLine = gate.enter(
      user,
      (release) => {
        settled = true;
        response.off('close', clientGone);
        // 'close' comes once the response is sent or the connection is gone, whichever ends the request.
        response.once('close', release);
        if (response.destroyed) release();
        done(null, payload);
      },
      () => {
        settled = true;
        response.off('close', clientGone);
        done(new ServiceError('rate_limited', 'too_many_requests', 'Too many requests at once; wait for an answer before sending more', { retryAfterSeconds: LINE_RETRY_AFTER_SECONDS }));
      },
    );
    // A client that leaves while waiting leaves the line (nobody is left to answer).
    function clientGone(): void {
      leaveLine();
    }
    if (!settled) response.once('close', clientGone);
  };
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/')) return;
    if (route.config?.longLived !== true) route.preParsing = prependRouteHook(route.preParsing, limit);
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (response === undefined || '429' in response) return;
    route.schema = { ...route.schema, response: { ...response, ...errorResponses(429) } };
  });
}
