/**
 * What one user may cost the service (docs/operations.md, "Cost limits"): the limits, their defaults and
 * their settings. Part of SETTINGS (settings.ts).
 */
import type { Setting } from './config-types.js';
import { integer } from './setting-values.js';

export interface CostLimits {
  /** Requests of one user served at once by each instance; the user's next ones wait in line. */
  userRequestsInFlight: number;
  /** Requests of one user that may wait in line on each instance; one more answers 429. */
  userRequestQueue: number;
  /** Milliseconds a request may wait in its user's line before it answers 429. */
  userRequestQueueTimeoutMs: number;
  /** Event streams one user may hold open on each instance. */
  userEventStreams: number;
  /** Optional hard cap: requests per second per user and instance (token bucket refill); 0: off (the default). */
  userRequestRate: number;
  /** Bucket size of the hard cap. */
  userRequestBurst: number;
  /** Wallets one user may own. */
  maxWalletsPerUser: number;
  /** Highest `gap_limit` of a new wallet. */
  maxGapLimit: number;
  /** Highest `count` of one page of `GET /wallets/{alias}/addresses`. */
  addressPageMax: number;
  /** Milliseconds a request (headers and body) may take to arrive; the connection is closed after it. */
  requestTimeoutMs: number;
}

export const DEFAULT_COST_LIMITS: CostLimits = {
  userRequestsInFlight: 4,
  userRequestQueue: 64,
  userRequestQueueTimeoutMs: 10_000,
  userEventStreams: 8,
  userRequestRate: 0,
  userRequestBurst: 20,
  maxWalletsPerUser: 50,
  maxGapLimit: 200,
  addressPageMax: 100,
  requestTimeoutMs: 30_000,
};

export const COST_LIMIT_SETTINGS: readonly Setting[] = [
  { key: 'user_requests_in_flight', env: 'SERVICE_USER_REQUESTS_IN_FLIGHT', flag: '--user-requests-in-flight', defaultText: '4', description: 'API requests of one user that each instance serves at once; the user\'s further requests wait in line, first come first served (event streams do not count).',
    apply: (d, t) => { d.limits.userRequestsInFlight = integer(t, 1, 10_000); } },
  { key: 'user_request_queue', env: 'SERVICE_USER_REQUEST_QUEUE', flag: '--user-request-queue', defaultText: '64', description: 'API requests of one user that may wait in line on each instance; one more answers 429 `too_many_requests` with `Retry-After`.',
    apply: (d, t) => { d.limits.userRequestQueue = integer(t, 0, 100_000); } },
  { key: 'user_request_queue_timeout', env: 'SERVICE_USER_REQUEST_QUEUE_TIMEOUT', flag: '--user-request-queue-timeout', defaultText: '10', description: 'Seconds a request may wait in its user\'s line; then it answers 429 `too_many_requests` with `Retry-After`.',
    apply: (d, t) => { d.limits.userRequestQueueTimeoutMs = integer(t, 1, 3600) * 1000; } },
  { key: 'user_event_streams', env: 'SERVICE_USER_EVENT_STREAMS', flag: '--user-event-streams', defaultText: '8', description: 'Event streams (`GET /events`) one user may hold open on each instance; one more answers 429 `too_many_requests`.',
    apply: (d, t) => { d.limits.userEventStreams = integer(t, 1, 10_000); } },
  { key: 'user_request_rate', env: 'SERVICE_USER_REQUEST_RATE', flag: '--user-request-rate', defaultText: '0 (off)', description: 'Optional hard cap: requests per second each user may make, per instance (a token bucket; more answer 429 `too_many_requests` with `Retry-After`, even one at a time); 0: no cap.',
    apply: (d, t) => { d.limits.userRequestRate = integer(t, 0, 1_000_000); } },
  { key: 'user_request_burst', env: 'SERVICE_USER_REQUEST_BURST', flag: '--user-request-burst', defaultText: '20', description: 'Bucket size of the `user_request_rate` cap: requests a user may make at once before the cap applies.',
    apply: (d, t) => { d.limits.userRequestBurst = integer(t, 1, 1_000_000); } },
  { key: 'max_wallets_per_user', env: 'SERVICE_MAX_WALLETS_PER_USER', flag: '--max-wallets-per-user', defaultText: '50', description: 'Wallets one user may own; one more answers 422 `too_many_wallets`.',
    apply: (d, t) => { d.limits.maxWalletsPerUser = integer(t, 1, 1_000_000); } },
  { key: 'max_gap_limit', env: 'SERVICE_MAX_GAP_LIMIT', flag: '--max-gap-limit', defaultText: '200', description: 'Highest `gap_limit` of a wallet, new or raised by its owner (at most 1000); more answers 422 `gap_limit_too_high`.',
    apply: (d, t) => { d.limits.maxGapLimit = integer(t, 1, 1000); } },
  { key: 'address_page_max', env: 'SERVICE_ADDRESS_PAGE_MAX', flag: '--address-page-max', defaultText: '100', description: 'Highest `count` of one page of a wallet\'s addresses (at most 1000); more answers 400 naming `count`.',
    apply: (d, t) => { d.limits.addressPageMax = integer(t, 1, 1000); } },
  { key: 'request_timeout', env: 'SERVICE_REQUEST_TIMEOUT', flag: '--request-timeout', defaultText: '30', description: 'Seconds a request (headers and body) may take to arrive; a slower one answers 408 and its connection is closed.',
    apply: (d, t) => { d.limits.requestTimeoutMs = integer(t, 1, 3600) * 1000; } },
];
