/**
 * Sync leadership on PostgreSQL: `pg_try_advisory_lock` on a connection of its own, held for as long as
 * that connection lives. If the connection drops, the lock is gone and the next acquire tries again.
 *
 * Advisory locks belong to the whole database, so the lock is named by the schema the connection works
 * in (`current_schema()`, the store's own through the same URL) as well: deployments in two schemas of
 * one database each have their own leader.
 */
import pg from 'pg';

/** Arbitrary constant naming the sync lock (the migration lock uses another); the schema names the rest. */
export const SYNC_LOCK_ID = 25_441_002;

/** The two-key form: a key space of its own, apart from the single-key migration lock. */
const TRY_LOCK = "select pg_try_advisory_lock($1, hashtext(coalesce(current_schema(), ''))) as locked";
/**
 * Instances sharing the following of wallets (`sync_sharing` on, ADR 0014) hold the same lock shared: any number
 * of them together, never beside a single leader (an instance left with sharing off) that follows every wallet.
 */
const TRY_LOCK_SHARED = "select pg_try_advisory_lock_shared($1, hashtext(coalesce(current_schema(), ''))) as locked";

export class PostgresSyncLeadership {
  private client: pg.Client | undefined;
  private held = false;

  constructor(
    private readonly url: string,
    private readonly lockId = SYNC_LOCK_ID,
    private readonly shared = false,
  ) {}

  async acquire(): Promise<boolean> {
    try {
      if (this.client && this.held) {
        await this.client.query('select 1');
        return true;
      }
      if (!this.client) {
        const client = new pg.Client({ connectionString: this.url });
        client.on('error', () => this.drop(client));
        client.on('end', () => this.drop(client));
        await client.connect();
        this.client = client;
      }
      const result = await this.client.query<{ locked: boolean }>(this.shared ? TRY_LOCK_SHARED : TRY_LOCK, [this.lockId]);
      this.held = result.rows[0]?.locked === true;
      return this.held;
    } catch {
      if (this.client) this.drop(this.client);
      return false;
    }
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.held = false;
    if (client) await client.end().catch(() => {});
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.held = false;
    void client.end().catch(() => {});
  }
}
