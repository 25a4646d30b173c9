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
}

export interface AuthFailuresTable {
  id: string;
  scope_key: string;
  failed_at: number;
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

export interface Database {
  schema_version: SchemaVersionTable;
  users: UsersTable;
  tokens: TokensTable;
  auth_failures: AuthFailuresTable;
  psbts: PsbtsTable;
  psbt_reservations: PsbtReservationsTable;
  service_settings: ServiceSettingsTable;
  web_sessions: WebSessionsTable;
}

export interface WebSessionsTable {
  /** SHA-256 (hex) of the session id; the id itself lives only in the browser's cookie. */
  id_hash: string;
  user_name: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}
