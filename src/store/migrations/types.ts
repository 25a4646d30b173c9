import type { Kysely } from 'kysely';

/**
 * One schema step. Versions are consecutive integers from 1; a migration, once released, never
 * changes (add a new one instead). `up` must use only types both SQLite and PostgreSQL accept.
 */
export interface Migration {
  version: number;
  name: string;
  // The schema before the step is not the current Database type, hence `any`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  up(db: Kysely<any>): Promise<void>;
}
