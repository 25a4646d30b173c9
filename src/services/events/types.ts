/**
 * The events the service records (docs/webhooks.md): each in the store transaction of the change that
 * causes it, so an event exists exactly when its change does.
 */
import { randomUUID } from 'node:crypto';
import type { NewEvent, StoredEvent } from '../../store/repositories.js';

export const EVENT_TYPES = [
  'psbt.created',
  'psbt.signed',
  'psbt.ready',
  'psbt.broadcast',
  'psbt.invalid',
  'psbt.deleted',
  'transaction.received',
  'transaction.sent',
  'transaction.confirmed',
  'transaction.replaced',
  'wallet.synced',
  'wallet.timelock_expiring',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: unknown): value is EventType => typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

export function newEvent(type: EventType, wallet: { id: string; alias: string }, at: number, data: Record<string, unknown>): NewEvent {
  return { id: randomUUID(), type, walletId: wallet.id, walletAlias: wallet.alias, occurredAt: at, data };
}

/** An event as clients see it (webhook body, stream message). */
export interface EventBody {
  id: string;
  seq: number;
  type: string;
  created_at: string;
  wallet: string;
  data: Record<string, unknown>;
}

export function eventBody(event: StoredEvent): EventBody {
  return { id: event.id, seq: event.seq, type: event.type, created_at: new Date(event.occurredAt).toISOString(), wallet: event.walletAlias, data: event.data };
}

/**
 * The envelope as JSON text, with `data` exactly as recorded rather than parsed and written again: a
 * retry or a redelivery carries the same bytes as the first delivery (and the same signature input),
 * amounts in the form they were recorded in.
 */
export function eventBodyText(event: StoredEvent): string {
  const { data: _data, ...envelope } = eventBody(event);
  return `${JSON.stringify(envelope).slice(0, -1)},"data":${event.dataText}}`;
}
