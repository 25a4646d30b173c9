/**
 * Webhook use cases: a user registers, for wallets it reaches, a URL and the event types it wants, and
 * gets the signing secret once; it lists, changes and removes its webhooks, reads their delivery log and
 * asks for one event to be delivered again. Delivery itself is deliverer.ts.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { DeliveryRecord, Store, StoredWallet, WebhookRecord } from '../../store/repositories.js';
import { ServiceError, invalidField } from '../errors.js';
import { requirePermission } from '../permissions.js';
import type { Principal } from '../principal.js';
import { walletNotFound, type WalletAccess } from '../wallets/access.js';
import { refusedAddress } from './address-policy.js';
import { newDelivery } from './deliverer.js';
import { newWebhookSecret } from './signature.js';
import { EVENT_TYPES, isEventType } from './types.js';

export const MAX_WEBHOOKS_PER_USER = 20;
const URL_MAX_CHARS = 2048;
const LOG_PAGE = 100;

export interface WebhookInput {
  url?: unknown;
  events?: unknown;
  wallets?: unknown;
}

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  wallets: string[];
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: string | null;
  event_type: string | null;
  wallet: string | null;
  status: string;
  attempts: number;
  response_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookServiceDeps {
  store: Store;
  access: Pick<WalletAccess, 'reachable'>;
  allowPrivate: boolean;
  now: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const webhookNotFound = () => new ServiceError('not_found', 'webhook_not_found', 'Webhook not found');

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  async create(principal: Principal, input: WebhookInput): Promise<WebhookView & { secret: string }> {
    requirePermission(principal, 'webhooks:manage');
    const url = this.checkUrl(input.url);
    const eventTypes = checkEvents(input.events);
    const reachable = await this.deps.access.reachable(principal);
    const walletIds = checkWallets(input.wallets, reachable);
    if ((await this.deps.store.webhooks.listForUser(principal.userName)).length >= MAX_WEBHOOKS_PER_USER) {
      throw new ServiceError('unprocessable', 'too_many_webhooks', `A user may have at most ${MAX_WEBHOOKS_PER_USER} webhooks; delete one to add another`);
    }
    const now = this.deps.now();
    const record: WebhookRecord = {
      id: randomUUID(),
      userName: principal.userName,
      url,
      eventTypes,
      walletIds,
      secret: newWebhookSecret(),
      createdAt: now,
      updatedAt: now,
      // Events from now on: those already recorded are not sent to a new webhook.
      eventCursor: await this.deps.store.events.lastSeq(),
    };
    await this.deps.store.webhooks.insert(record);
    return { ...this.view(record, reachable), secret: record.secret };
  }

  async list(principal: Principal): Promise<WebhookView[]> {
    requirePermission(principal, 'webhooks:manage');
    const reachable = await this.deps.access.reachable(principal);
    return (await this.deps.store.webhooks.listForUser(principal.userName)).filter((w) => withinTokenScope(principal, w)).map((w) => this.view(w, reachable));
  }

  async get(principal: Principal, id: string): Promise<WebhookView> {
    const webhook = await this.own(principal, id);
    return this.view(webhook, await this.deps.access.reachable(principal));
  }

  async update(principal: Principal, id: string, input: WebhookInput): Promise<WebhookView> {
    const webhook = await this.own(principal, id);
    const reachable = await this.deps.access.reachable(principal);
    const change = {
      ...(input.url !== undefined ? { url: this.checkUrl(input.url) } : {}),
      ...(input.events !== undefined ? { eventTypes: checkEvents(input.events) } : {}),
      ...(input.wallets !== undefined ? { walletIds: checkWallets(input.wallets, reachable) } : {}),
    };
    const at = this.deps.now();
    if (!(await this.deps.store.webhooks.update(webhook.id, change, at))) throw webhookNotFound();
    return this.view({ ...webhook, ...change, updatedAt: at }, reachable);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const webhook = await this.own(principal, id);
    if (!(await this.deps.store.webhooks.delete(webhook.id))) throw webhookNotFound();
  }

  /** The delivery log, newest first. */
  async deliveries(principal: Principal, id: string): Promise<DeliveryView[]> {
    const webhook = await this.own(principal, id);
    return Promise.all((await this.deps.store.webhooks.deliveries(webhook.id, LOG_PAGE)).map((d) => this.deliveryView(d)));
  }

  /** Queues the event of one delivery again, as a new delivery sent as soon as the ones before it on its wallet. */
  async redeliver(principal: Principal, id: string, deliveryId: string): Promise<DeliveryView> {
    const webhook = await this.own(principal, id);
    const original = typeof deliveryId === 'string' ? await this.deps.store.webhooks.findDelivery(webhook.id, deliveryId) : undefined;
    if (!original) throw new ServiceError('not_found', 'delivery_not_found', 'Delivery not found');
    const now = this.deps.now();
    const again = newDelivery(webhook.id, { seq: original.eventSeq, walletId: original.walletId }, now);
    await this.deps.store.webhooks.insertDeliveries([again]);
    return this.deliveryView(again);
  }

  private async own(principal: Principal, id: string): Promise<WebhookRecord> {
    requirePermission(principal, 'webhooks:manage');
    const webhook = typeof id === 'string' && id.length <= 64 ? await this.deps.store.webhooks.find(id) : undefined;
    // Another user's webhook, or one reaching past a narrowed token's wallets, answers as one that does not exist.
    if (!webhook || webhook.userName !== principal.userName || !withinTokenScope(principal, webhook)) throw webhookNotFound();
    return webhook;
  }

  private view(w: WebhookRecord, reachable: readonly StoredWallet[]): WebhookView {
    const ids = new Set(w.walletIds);
    return {
      id: w.id,
      url: w.url,
      events: w.eventTypes,
      wallets: reachable.filter((r) => ids.has(r.id)).map((r) => r.alias),
      created_at: iso(w.createdAt),
      updated_at: iso(w.updatedAt),
    };
  }

  private async deliveryView(d: DeliveryRecord): Promise<DeliveryView> {
    const event = await this.deps.store.events.find(d.eventSeq);
    return {
      id: d.id,
      event_id: event?.id ?? null,
      event_type: event?.type ?? null,
      wallet: event?.walletAlias ?? null,
      status: d.status,
      attempts: d.attempts,
      response_code: d.responseCode,
      error: d.error,
      next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
      created_at: iso(d.createdAt),
      updated_at: iso(d.updatedAt),
    };
  }

  /** An http(s) URL without credentials; an address given literally is checked now (names at delivery). */
  private checkUrl(value: unknown): string {
    if (typeof value !== 'string' || value.length === 0 || value.length > URL_MAX_CHARS) throw invalidField('/url', `must be an http:// or https:// URL of at most ${URL_MAX_CHARS} characters`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidField('/url', 'must be an http:// or https:// URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('/url', 'must be an http:// or https:// URL');
    if (url.username !== '' || url.password !== '') throw invalidField('/url', 'must not carry a user name or password');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) {
      const refused = refusedAddress(host, this.deps.allowPrivate);
      if (refused) {
        throw new ServiceError('unprocessable', 'webhook_address_refused', `Webhooks may not deliver to ${host}: ${refused}`, { errors: [{ path: '/url', message: `points at ${refused}` }] });
      }
    }
    return url.toString();
  }
}

/**
 * Whether a narrowed token may see and change this webhook: only when every wallet it delivers is in the
 * token's list (a webhook without a wallet list would deliver all of them, so it never is).
 */
function withinTokenScope(principal: Principal, webhook: WebhookRecord): boolean {
  if (principal.walletIds === undefined) return true;
  const scope = new Set(principal.walletIds);
  return webhook.walletIds.length > 0 && webhook.walletIds.every((id) => scope.has(id));
}

function checkEvents(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidField('/events', `must be a non-empty list of event types (${EVENT_TYPES.join(', ')})`);
  const bad = value.findIndex((t) => !isEventType(t));
  if (bad >= 0) throw invalidField(`/events/${bad}`, `must be one of ${EVENT_TYPES.join(', ')}`);
  return [...new Set(value as string[])];
}

function checkWallets(value: unknown, reachable: readonly StoredWallet[]): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 1000 || !value.every((a) => typeof a === 'string')) {
    throw invalidField('/wallets', 'must be a non-empty list of wallet aliases');
  }
  const byAlias = new Map(reachable.map((w) => [w.alias, w.id]));
  return [...new Set(value as string[])].map((alias) => {
    const id = byAlias.get(alias);
    if (id === undefined) throw walletNotFound();
    return id;
  });
}
