/**
 * Delivers events to webhooks. Each round: (1) every webhook's new events become delivery rows, the
 * webhook's cursor moving by compare-and-set in the same transaction (so one instance does it); (2) the
 * first pending delivery of each webhook and wallet, once due, is claimed by compare-and-set (a lease, so
 * one instance sends it; one killed mid-send lets the lease lapse) and POSTed, signed. A failure is tried
 * again after growing delays for more than a day, and the next events of that wallet wait for it: order
 * per wallet, at least once. Everything lives in the store, so deliveries survive restarts.
 *
 * Fair between users: sends run beside the rounds, not inside them, and each user has a few sending slots
 * on each instance, filled in turn with the other users'. A user whose receivers hang holds only its own
 * slots, for at most the attempt's timeout; another user's delivery is sent in the next round.
 */
import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { DeliveryRecord, Store, StoredEvent, WebhookRecord } from '../../store/repositories.js';
import { refusedAddress } from './address-policy.js';
import { readFeed } from './feed.js';
import { DELIVERY_ID_HEADER, EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signPayload } from './signature.js';
import { eventBodyText } from './types.js';

/** Delay before each retry: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 12 h (about 32.6 h in all). */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 43_200_000] as const;
/** The whole exchange of one attempt, connection to last byte of the answer. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Attempts one user may have in flight at once on one instance. */
export const SLOTS_PER_USER = 4;
/** Longer than any attempt, so a lease lapses only when its sender is gone. */
const LEASE_MS = 60_000;
const FAN_OUT_BATCH = 500;
const SEND_BATCH = 100;
const ERROR_MAX_CHARS = 200;

export type AddressLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface WebhookDelivererDeps {
  store: Store;
  allowPrivate: boolean;
  now: () => number;
  /** Name resolution (default: the system resolver). */
  lookup?: AddressLookup;
  /** Per attempt (default REQUEST_TIMEOUT_MS); at most the lease. */
  requestTimeoutMs?: number;
  /** Per user and instance (default SLOTS_PER_USER). */
  slotsPerUser?: number;
  log?: ((level: 'info' | 'warn', message: string, details?: Record<string, unknown>) => void) | undefined;
}

interface SendOutcome {
  responseCode: number | null;
  error: string | null;
}

export class WebhookDeliverer {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private running: Promise<void> | undefined;
  /** Attempts in flight on this instance, by user. */
  private readonly sending = new Map<string, Set<Promise<void>>>();
  /** Webhooks by id, as of the last round (whose user each belongs to). */
  private webhooks = new Map<string, WebhookRecord>();
  private readonly aborts = new Set<AbortController>();
  /** Set by stop(): no attempt starts any more. */
  private closing = false;
  /** Starting attempts takes turns, so slots are counted right. */
  private dispatching: Promise<void> = Promise.resolve();

  constructor(private readonly deps: WebhookDelivererDeps) {}

  /**
   * One round: new events into deliveries, then the due ones started, and this waits until every attempt in
   * flight has ended (with the events that follow delivered ones). The timer's rounds do not wait.
   */
  async runOnce(): Promise<void> {
    await this.round();
    for (let inFlight = this.inFlight(); inFlight.length > 0; inFlight = this.inFlight()) await Promise.all(inFlight);
  }

  /** New events into deliveries, then the due ones started. Rounds never overlap. */
  private round(): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const round = previous.catch(() => undefined).then(async () => {
      await this.fanOut();
      await this.startDue();
    });
    this.running = round;
    return round;
  }

  private inFlight(): Promise<void>[] {
    return [...this.sending.values()].flatMap((set) => [...set]);
  }

  start(intervalMs: number): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.closing = false;
    const tick = async () => {
      try {
        await this.round();
      } catch (error) {
        this.deps.log?.('warn', 'webhook round failed', { reason: error instanceof Error ? error.message : String(error) });
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), intervalMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  /** Ends the rounds and cuts the attempts in flight short (they are tried again, here or elsewhere). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    for (const abort of this.aborts) abort.abort(new Error('the service is stopping'));
    await Promise.all(this.inFlight().map((p) => p.catch(() => undefined)));
  }

  private async fanOut(): Promise<void> {
    const { store } = this.deps;
    const all = await store.webhooks.listAll();
    this.webhooks = new Map(all.map((w) => [w.id, w]));
    for (const webhook of all) {
      // The wallets the webhook's user still reaches: access taken away stops the deliveries.
      const reachable = new Set((await store.wallets.listAccessible(webhook.userName)).map((w) => w.wallet.id));
      const walletIds = webhook.walletIds.filter((id) => reachable.has(id));
      const page = await readFeed(store, webhook.eventCursor, walletIds, FAN_OUT_BATCH);
      if (page.cursor === webhook.eventCursor) continue;
      const now = this.deps.now();
      const rows = page.events.filter((e) => webhook.eventTypes.includes(e.type)).map((e) => newDelivery(webhook.id, e, now));
      await store.transaction(async (repos) => {
        if (!(await repos.webhooks.advanceCursor(webhook.id, webhook.eventCursor, page.cursor))) return; // another instance did it
        await repos.webhooks.insertDeliveries(rows);
      });
    }
  }

  /**
   * Starts the due queue heads, taking users in turn, each up to its free slots; a user whose slots are all
   * busy here is left out of the query, so its backlog does not hide the other users' heads.
   */
  private startDue(): Promise<void> {
    const next = this.dispatching.catch(() => undefined).then(() => this.startDueNow());
    this.dispatching = next;
    return next;
  }

  private async startDueNow(): Promise<void> {
    if (this.closing) return;
    const { store } = this.deps;
    const slots = this.deps.slotsPerUser ?? SLOTS_PER_USER;
    const busy = new Set([...this.sending].filter(([, set]) => set.size >= slots).map(([user]) => user));
    const skipWebhooks = [...this.webhooks.values()].filter((w) => busy.has(w.userName)).map((w) => w.id);
    const heads = await store.webhooks.queueHeads(SEND_BATCH, { dueBy: this.deps.now(), skipWebhooks });
    const byUser = new Map<string, DeliveryRecord[]>();
    for (const head of heads) {
      const user = this.webhooks.get(head.webhookId)?.userName ?? '';
      byUser.set(user, [...(byUser.get(user) ?? []), head]);
    }
    for (let turn = 0, started = true; started; turn++) {
      started = false;
      for (const [user, queue] of byUser) {
        const head = queue[turn];
        if (!head || (this.sending.get(user)?.size ?? 0) >= slots) continue;
        started = true;
        if (!(await store.webhooks.claim(head.id, this.deps.now(), this.deps.now() + LEASE_MS))) continue; // another instance sends it
        this.track(user, this.attempt(head));
      }
    }
  }

  /** Keeps an attempt in its user's slots until it ends; a delivered one lets the next of its queue start. */
  private track(user: string, attempt: Promise<boolean>): void {
    const set = this.sending.get(user) ?? new Set<Promise<void>>();
    this.sending.set(user, set);
    const tracked: Promise<void> = attempt
      .catch((error: unknown) => {
        this.deps.log?.('warn', 'webhook attempt failed', { reason: error instanceof Error ? error.message : String(error) });
        return false;
      })
      .then(async (delivered) => {
        set.delete(tracked);
        if (set.size === 0) this.sending.delete(user);
        if (delivered && !this.closing) await this.startDue().catch(() => undefined);
      });
    set.add(tracked);
  }

  /** Sends one claimed delivery and records the outcome; true when delivered. */
  private async attempt(delivery: DeliveryRecord): Promise<boolean> {
    const { store } = this.deps;
    const webhook = await store.webhooks.find(delivery.webhookId);
    const event = await store.events.find(delivery.eventSeq);
    const outcome = webhook && event ? await this.send(webhook, delivery, event) : { responseCode: null, error: 'the webhook or the event is gone' };
    const next = this.nextState(delivery, outcome);
    await store.webhooks.recordAttempt(delivery.id, next, this.deps.now());
    return next.status === 'delivered';
  }

  private nextState(delivery: DeliveryRecord, outcome: SendOutcome): Pick<DeliveryRecord, 'status' | 'attempts' | 'nextAttemptAt' | 'responseCode' | 'error'> {
    const attempts = delivery.attempts + 1;
    const delivered = outcome.responseCode !== null && outcome.responseCode >= 200 && outcome.responseCode < 300;
    const delay = RETRY_DELAYS_MS[attempts - 1];
    const status = delivered ? 'delivered' : delay === undefined ? 'failed' : 'pending';
    return { status, attempts, nextAttemptAt: status === 'pending' ? this.deps.now() + delay! : delivery.nextAttemptAt, responseCode: outcome.responseCode, error: outcome.error };
  }

  private async send(webhook: WebhookRecord, delivery: DeliveryRecord, event: StoredEvent): Promise<SendOutcome> {
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return { responseCode: null, error: 'invalid URL' };
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = await (this.deps.lookup ?? ((h: string) => dnsLookup(h, { all: true })))(host);
    } catch {
      return { responseCode: null, error: `${host} does not resolve` };
    }
    // Every address the name has must be allowed; the request then goes to the address checked here.
    for (const a of addresses) {
      const refused = refusedAddress(a.address, this.deps.allowPrivate);
      if (refused) return { responseCode: null, error: `refused: ${host} resolves to ${refused}` };
    }
    const target = addresses[0];
    if (!target) return { responseCode: null, error: `${host} does not resolve` };
    const body = eventBodyText(event);
    const timestamp = Math.floor(this.deps.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'wcs-webhooks',
      [EVENT_ID_HEADER]: event.id,
      [EVENT_TYPE_HEADER]: event.type,
      [DELIVERY_ID_HEADER]: delivery.id,
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signPayload(webhook.secret, timestamp, body),
    };
    const abort = new AbortController();
    this.aborts.add(abort);
    try {
      return { responseCode: await post(url, body, headers, target, Math.min(this.deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, LEASE_MS / 2), abort.signal), error: null };
    } catch (error) {
      return { responseCode: null, error: (error instanceof Error ? error.message : String(error)).slice(0, ERROR_MAX_CHARS) };
    } finally {
      this.aborts.delete(abort);
    }
  }
}

/** A pending delivery of one event to one webhook, due now (first delivery or a redelivery). */
export function newDelivery(webhookId: string, event: { seq: number; walletId: string }, now: number): DeliveryRecord {
  return {
    id: randomUUID(),
    webhookId,
    eventSeq: event.seq,
    walletId: event.walletId,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    leaseUntil: null,
    responseCode: null,
    error: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** POSTs to `url`, connecting to `target` (already checked) whatever the resolver would say now; no redirects. */
function post(url: URL, body: string, headers: Record<string, string>, target: { address: string; family: number }, timeoutMs: number, signal: AbortSignal): Promise<number> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: (_host, options, callback) => {
          if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [target]);
          else callback(null, target.address, target.family);
        },
      },
      (response) => {
        response.resume(); // the body is not used
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    // The whole exchange, not only idle time: a receiver trickling bytes is cut off too.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    const onAbort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
    req.on('error', reject);
    req.end(body);
  });
}
