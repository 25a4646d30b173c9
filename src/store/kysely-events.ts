/** Events (the outbox), webhooks and deliveries over Kysely, for SQLite and PostgreSQL alike. */
import type { Kysely, Selectable } from 'kysely';
import type { DeliveryRecord, DeliveryStatus, EventRepository, NewEvent, StoredEvent, WebhookChange, WebhookRecord, WebhookRepository } from './event-records.js';
import type { Database, EventsTable, WebhookDeliveriesTable, WebhooksTable } from './schema.js';

const toEvent = (row: Selectable<EventsTable>): StoredEvent => ({
  seq: Number(row.seq),
  id: row.id,
  type: row.type,
  walletId: row.wallet_id,
  walletAlias: row.wallet_alias,
  occurredAt: Number(row.occurred_at),
  data: JSON.parse(row.data) as Record<string, unknown>,
  dataText: row.data,
});

const toWebhook = (row: Selectable<WebhooksTable>): WebhookRecord => ({
  id: row.id,
  userName: row.user_name,
  url: row.url,
  eventTypes: JSON.parse(row.event_types) as string[],
  walletIds: JSON.parse(row.wallet_ids) as string[],
  secret: row.secret,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  eventCursor: Number(row.event_cursor),
});

const toDelivery = (row: Selectable<WebhookDeliveriesTable>): DeliveryRecord => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventSeq: Number(row.event_seq),
  walletId: row.wallet_id,
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  nextAttemptAt: Number(row.next_attempt_at),
  leaseUntil: row.lease_until == null ? null : Number(row.lease_until),
  responseCode: row.response_code == null ? null : Number(row.response_code),
  error: row.error,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/** Announcements looked up per query (bound parameters stay far below both databases' limits). */
const ANNOUNCEMENTS_PER_QUERY = 500;
/** Events inserted per statement (eight parameters each). */
const EVENTS_PER_INSERT = 500;

export class KyselyEvents implements EventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async append(all: readonly NewEvent[]): Promise<StoredEvent[]> {
    const events = await this.withoutRecordedAnnouncements(all);
    if (events.length === 0) return [];
    // The row lock taken here is held until commit: seqs are handed out in commit order.
    const row = await this.db
      .updateTable('event_sequence')
      .set((eb) => ({ last_seq: eb('last_seq', '+', events.length) }))
      .where('name', '=', 'events')
      .returning('last_seq')
      .executeTakeFirstOrThrow();
    const first = Number(row.last_seq) - events.length + 1;
    const stored = events.map((e, i) => ({ ...e, seq: first + i, dataText: JSON.stringify(e.data) }));
    // In parts: one write may hold thousands of events (every wallet of a catch-up reaching the tip at once), and
    // eight parameters each passed SQLite's 32,766 past 4,095 of them, failing the write and so the sync.
    for (let i = 0; i < stored.length; i += EVENTS_PER_INSERT) {
      await this.db
        .insertInto('events')
        .values(stored.slice(i, i + EVENTS_PER_INSERT).map((e) => ({ seq: e.seq, id: e.id, type: e.type, wallet_id: e.walletId, wallet_alias: e.walletAlias, occurred_at: e.occurredAt, data: e.dataText, announcement: e.announcement ?? null })))
        .execute();
    }
    return stored;
  }

  private async withoutRecordedAnnouncements(events: readonly NewEvent[]): Promise<readonly NewEvent[]> {
    const announcing = events.filter((e) => e.announcement !== undefined);
    if (announcing.length === 0) return events;
    const key = (walletId: string, announcement: string) => `${walletId}\n${announcement}`;
    const recorded = new Set<string>();
    for (let i = 0; i < announcing.length; i += ANNOUNCEMENTS_PER_QUERY) {
      const batch = announcing.slice(i, i + ANNOUNCEMENTS_PER_QUERY);
      const rows = await this.db
        .selectFrom('events')
        .select(['wallet_id', 'announcement'])
        .where('wallet_id', 'in', [...new Set(batch.map((e) => e.walletId))])
        .where('announcement', 'in', [...new Set(batch.map((e) => e.announcement!))])
        .execute();
      for (const row of rows) recorded.add(key(row.wallet_id, row.announcement!));
    }
    return events.filter((e) => {
      if (e.announcement === undefined) return true;
      const k = key(e.walletId, e.announcement);
      if (recorded.has(k)) return false;
      recorded.add(k);
      return true;
    });
  }

  async listAfter(afterSeq: number, walletIds: readonly string[] | undefined, limit: number, upTo?: number): Promise<StoredEvent[]> {
    if (walletIds?.length === 0) return [];
    let query = this.db.selectFrom('events').selectAll().where('seq', '>', afterSeq);
    if (upTo !== undefined) query = query.where('seq', '<=', upTo);
    if (walletIds) query = query.where('wallet_id', 'in', [...walletIds]);
    return (await query.orderBy('seq').limit(limit).execute()).map(toEvent);
  }

  async find(seq: number): Promise<StoredEvent | undefined> {
    const row = await this.db.selectFrom('events').selectAll().where('seq', '=', seq).executeTakeFirst();
    return row && toEvent(row);
  }

  async lastSeq(): Promise<number> {
    const row = await this.db.selectFrom('event_sequence').select('last_seq').where('name', '=', 'events').executeTakeFirst();
    return Number(row?.last_seq ?? 0);
  }
}

export class KyselyWebhooks implements WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(w: WebhookRecord): Promise<void> {
    await this.db
      .insertInto('webhooks')
      .values({
        id: w.id,
        user_name: w.userName,
        url: w.url,
        event_types: JSON.stringify(w.eventTypes),
        wallet_ids: JSON.stringify(w.walletIds),
        secret: w.secret,
        created_at: w.createdAt,
        updated_at: w.updatedAt,
        event_cursor: w.eventCursor,
      })
      .execute();
  }

  async find(id: string): Promise<WebhookRecord | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toWebhook(row);
  }

  async listForUser(userName: string): Promise<WebhookRecord[]> {
    return (await this.db.selectFrom('webhooks').selectAll().where('user_name', '=', userName).orderBy('created_at').orderBy('id').execute()).map(toWebhook);
  }

  async listAll(): Promise<WebhookRecord[]> {
    return (await this.db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute()).map(toWebhook);
  }

  async update(id: string, change: WebhookChange, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('webhooks')
      .set({
        updated_at: at,
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.eventTypes !== undefined ? { event_types: JSON.stringify(change.eventTypes) } : {}),
        ...(change.walletIds !== undefined ? { wallet_ids: JSON.stringify(change.walletIds) } : {}),
      })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    await this.db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    const result = await this.db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteAllForUser(userName: string): Promise<number> {
    const owned = this.db.selectFrom('webhooks').select('id').where('user_name', '=', userName);
    await this.db.deleteFrom('webhook_deliveries').where('webhook_id', 'in', owned).execute();
    const result = await this.db.deleteFrom('webhooks').where('user_name', '=', userName).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async advanceCursor(id: string, expected: number, next: number): Promise<boolean> {
    const result = await this.db.updateTable('webhooks').set({ event_cursor: next }).where('id', '=', id).where('event_cursor', '=', expected).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async insertDeliveries(rows: readonly DeliveryRecord[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('webhook_deliveries')
      .values(
        rows.map((d) => ({
          id: d.id,
          webhook_id: d.webhookId,
          event_seq: d.eventSeq,
          wallet_id: d.walletId,
          status: d.status,
          attempts: d.attempts,
          next_attempt_at: d.nextAttemptAt,
          lease_until: d.leaseUntil,
          response_code: d.responseCode,
          error: d.error,
          created_at: d.createdAt,
          updated_at: d.updatedAt,
        })),
      )
      .execute();
  }

  async queueHeads(limit: number, options: { dueBy?: number; skipWebhooks?: readonly string[] } = {}): Promise<DeliveryRecord[]> {
    let query = this.db.selectFrom('webhook_deliveries as d').selectAll('d').where('d.status', '=', 'pending');
    const { dueBy, skipWebhooks } = options;
    if (dueBy !== undefined) {
      query = query.where('d.next_attempt_at', '<=', dueBy).where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', dueBy)]));
    }
    if (skipWebhooks && skipWebhooks.length > 0) query = query.where('d.webhook_id', 'not in', [...skipWebhooks]);
    const rows = await query
      .where((eb) =>
        eb(
          'd.event_seq',
          '=',
          eb
            .selectFrom('webhook_deliveries as e')
            .select((e) => e.fn.min('e.event_seq').as('first'))
            .where('e.status', '=', 'pending')
            .whereRef('e.webhook_id', '=', 'd.webhook_id')
            .whereRef('e.wallet_id', '=', 'd.wallet_id'),
        ),
      )
      .orderBy('d.next_attempt_at')
      .orderBy('d.created_at')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }

  async claim(id: string, now: number, leaseUntil: number): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({ lease_until: leaseUntil })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async recordAttempt(id: string, o: Pick<DeliveryRecord, 'status' | 'attempts' | 'nextAttemptAt' | 'responseCode' | 'error'>, at: number): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ status: o.status, attempts: o.attempts, next_attempt_at: o.nextAttemptAt, response_code: o.responseCode, error: o.error, lease_until: null, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  async deliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('event_seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }

  async findDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
    return row && toDelivery(row);
  }
}
