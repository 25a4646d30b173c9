import type { ColumnType } from 'kysely';

/**
 * Table shapes as Kysely sees them. Types stay portable between SQLite and PostgreSQL:
 * text, bigint (epoch milliseconds, seconds, satoshis) and integer 0/1 for booleans.
 */
export interface SchemaVersionTable {
  version: number;
  name: string;
  applied_at: number;
}

export interface UsersTable {
  name: string;
  password_hash: string;
  is_admin: number;
  created_at: number;
}

export interface TokensTable {
  id: string;
  user_name: string;
  description: string;
  token_hash: string;
  life_seconds: number;
  created_at: number;
  expires_at: number;
  /** JSON array of permissions; null: all of the user's rights. */
  permissions: string | null;
  /** JSON array of wallet ids; null: every wallet of the user. */
  wallet_ids: string | null;
}

export interface LoginAttemptsTable {
  seq: number;
  scope_key: string;
  state: 'pending' | 'failed';
  at: number;
}

export interface LoginAttemptSequenceTable {
  name: string;
  last_seq: number;
}

export interface PsbtsTable {
  wallet_id: string;
  txid: string;
  psbt: string;
  /** JSON array of output indexes. */
  change_outputs: string;
  full_size: number;
  status: string;
  created_at: number;
  updated_at: number;
  created_by: string;
  /** Raised by every change of the row (compare-and-set). */
  version: number;
  /** Miniscript wallets: index of the spending path in the wallet's plan; null for the fixed shapes. */
  spending_path: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface PsbtReservationsTable {
  wallet_id: string;
  txid: string;
  vout: number;
  psbt_txid: string;
}

export interface ServiceSettingsTable {
  name: string;
  value: string;
  updated_at: number;
}

export interface EventSequenceTable {
  name: string;
  last_seq: number;
}

export interface EventsTable {
  seq: number;
  id: string;
  type: string;
  wallet_id: string;
  wallet_alias: string;
  occurred_at: number;
  /** JSON object. */
  data: string;
  /** What the event announces about a transaction, recorded once per wallet (migration 15); null for others. */
  announcement: string | null;
}

export interface WebhooksTable {
  id: string;
  user_name: string;
  url: string;
  event_types: string;
  wallet_ids: string;
  secret: string;
  created_at: number;
  updated_at: number;
  event_cursor: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_seq: number;
  wallet_id: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  response_code: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  schema_version: SchemaVersionTable;
  users: UsersTable;
  tokens: TokensTable;
  login_attempts: LoginAttemptsTable;
  login_attempt_sequence: LoginAttemptSequenceTable;
  psbts: PsbtsTable;
  psbt_reservations: PsbtReservationsTable;
  service_settings: ServiceSettingsTable;
  web_sessions: WebSessionsTable;
  event_sequence: EventSequenceTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export interface WebSessionsTable {
  /** SHA-256 (hex) of the session id; the id itself lives only in the browser's cookie. */
  id_hash: string;
  user_name: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}
