/**
 * Delivers events to webhooks. Each round: (1) every webhook's new events become delivery rows, the
 * webhook's cursor moving by compare-and-set in the same transaction (so one instance does it); (2) the
 * first pending delivery of each webhook and wallet, once due, is claimed by compare-and-set (a lease, so
 * one instance sends it; one killed mid-send lets the lease lapse) and POSTed, signed. A failure is tried
 * again after growing delays for more than a day, and the next events of that wallet wait for it: order
 * per wallet, at least once. Everything lives in the store, so deliveries survive restarts.
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
const LEASE_MS = 60_000;
const REQUEST_TIMEOUT_MS = 10_000;
const FAN_OUT_BATCH = 500;
const SEND_BATCH = 100;
/** Send passes in one round (each moves every wallet's queue on by one event). */
const MAX_SEND_PASSES = 50;
const ERROR_MAX_CHARS = 200;

export type AddressLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface WebhookDelivererDeps {
  store: Store;
  allowPrivate: boolean;
  now: () => number;
  /** Name resolution (default: the system resolver). */
  lookup?: AddressLookup;
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

  constructor(private readonly deps: WebhookDelivererDeps) {}

  /** One round: new events into deliveries, then the due ones sent. Rounds never overlap. */
  runOnce(): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const round = previous.catch(() => undefined).then(async () => {
      await this.fanOut();
      await this.sendDue();
    });
    this.running = round;
    return round;
  }

  start(intervalMs: number): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = async () => {
      try {
        await this.runOnce();
      } catch (error) {
        this.deps.log?.('warn', 'webhook round failed', { reason: error instanceof Error ? error.message : String(error) });
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), intervalMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async fanOut(): Promise<void> {
    const { store } = this.deps;
    for (const webhook of await store.webhooks.listAll()) {
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

  /** Sends the due heads; while some get delivered, the events behind them follow in the same round. */
  private async sendDue(): Promise<void> {
    for (let pass = 0; pass < MAX_SEND_PASSES; pass++) {
      if ((await this.sendHeads()) === 0) return;
    }
  }

  /** Sends every due queue head once; the number delivered. */
  private async sendHeads(): Promise<number> {
    const { store } = this.deps;
    const now = this.deps.now();
    const due = (await store.webhooks.queueHeads(SEND_BATCH)).filter((d) => d.nextAttemptAt <= now && (d.leaseUntil === null || d.leaseUntil <= now));
    const webhooks = new Map<string, WebhookRecord | undefined>();
    let delivered = 0;
    await Promise.all(
      due.map(async (delivery) => {
        if (!(await store.webhooks.claim(delivery.id, now, now + LEASE_MS))) return; // another instance sends it
        if (!webhooks.has(delivery.webhookId)) webhooks.set(delivery.webhookId, await store.webhooks.find(delivery.webhookId));
        const webhook = webhooks.get(delivery.webhookId);
        const event = await store.events.find(delivery.eventSeq);
        const outcome = webhook && event ? await this.send(webhook, delivery, event) : { responseCode: null, error: 'the webhook or the event is gone' };
        const next = this.nextState(delivery, outcome);
        await store.webhooks.recordAttempt(delivery.id, next, this.deps.now());
        if (next.status === 'delivered') delivered++;
      }),
    );
    return delivered;
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
    try {
      return { responseCode: await post(url, body, headers, target), error: null };
    } catch (error) {
      return { responseCode: null, error: (error instanceof Error ? error.message : String(error)).slice(0, ERROR_MAX_CHARS) };
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
function post(url: URL, body: string, headers: Record<string, string>, target: { address: string; family: number }): Promise<number> {
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
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(body);
  });
}
