/** What the services may ask of persistence about events (the outbox), webhooks and their deliveries. */

export interface NewEvent {
  /** UUID, shown to clients as the event id. */
  id: string;
  type: string;
  walletId: string;
  walletAlias: string;
  /** Epoch milliseconds. */
  occurredAt: number;
  data: Record<string, unknown>;
  /**
   * What the event announces about one transaction (kind, txid, depth and block when confirmed), when it
   * does: such an event is recorded once per wallet, so a rescan finding the same transactions is silent.
   */
  announcement?: string;
}

export interface StoredEvent extends NewEvent {
  /** Position in the one order of all events: grows in commit order, without gaps. */
  seq: number;
  /** `data` as recorded (JSON text): bodies carry it as is, so every delivery of an event has the same bytes. */
  dataText: string;
}

export interface EventRepository {
  /**
   * Appends the events in order, leaving out those whose announcement is already recorded for their wallet
   * (or earlier in the list); the ones recorded are returned. Call it last in the transaction of the change:
   * it takes the sequence row, which other writers of events then wait for until this transaction ends.
   */
  append(events: readonly NewEvent[]): Promise<StoredEvent[]>;
  /** Events after `afterSeq` and up to `upTo`, oldest first, of these wallets (undefined: of all). */
  listAfter(afterSeq: number, walletIds: readonly string[] | undefined, limit: number, upTo?: number): Promise<StoredEvent[]>;
  find(seq: number): Promise<StoredEvent | undefined>;
  /** The seq of the newest event, 0 for none. */
  lastSeq(): Promise<number>;
}

export interface WebhookRecord {
  id: string;
  userName: string;
  url: string;
  eventTypes: string[];
  walletIds: string[];
  /** The HMAC key; shown to its owner once, kept because every delivery is signed with it. */
  secret: string;
  createdAt: number;
  updatedAt: number;
  /** Highest event seq already turned into deliveries (or passed over) for this webhook. */
  eventCursor: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  eventSeq: number;
  walletId: string;
  status: DeliveryStatus;
  attempts: number;
  /** Epoch milliseconds. */
  nextAttemptAt: number;
  leaseUntil: number | null;
  responseCode: number | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookChange {
  url?: string;
  eventTypes?: string[];
  walletIds?: string[];
}

export interface WebhookRepository {
  insert(webhook: WebhookRecord): Promise<void>;
  find(id: string): Promise<WebhookRecord | undefined>;
  /** Oldest first. */
  listForUser(userName: string): Promise<WebhookRecord[]>;
  listAll(): Promise<WebhookRecord[]>;
  update(id: string, change: WebhookChange, at: number): Promise<boolean>;
  /** Deletes the webhook and its delivery log. */
  delete(id: string): Promise<boolean>;
  /** Deletes every webhook of the user with their delivery logs; how many webhooks. */
  deleteAllForUser(userName: string): Promise<number>;
  /** Compare-and-set of the cursor; false when another instance moved it first. */
  advanceCursor(id: string, expected: number, next: number): Promise<boolean>;
  insertDeliveries(rows: readonly DeliveryRecord[]): Promise<void>;
  /**
   * The oldest pending deliveries of each webhook and wallet: only these may be sent (order per wallet).
   * With `dueBy`, only those due and not leased then; `skipWebhooks` leaves those webhooks' out.
   */
  queueHeads(limit: number, options?: { dueBy?: number; skipWebhooks?: readonly string[] }): Promise<DeliveryRecord[]>;
  /** Takes the delivery for sending until `leaseUntil` unless another instance holds it; true when taken. */
  claim(id: string, now: number, leaseUntil: number): Promise<boolean>;
  /** Writes the outcome of an attempt and lets the lease go. */
  recordAttempt(id: string, outcome: Pick<DeliveryRecord, 'status' | 'attempts' | 'nextAttemptAt' | 'responseCode' | 'error'>, at: number): Promise<void>;
  /** Newest first. */
  deliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]>;
  findDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined>;
}
