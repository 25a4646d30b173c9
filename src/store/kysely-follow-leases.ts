/**
 * Leases on the following of wallets (PostgreSQL only: the statements use its clock and row locks; SQLite, one
 * process, never asks). Every time is the database's clock, so the instances' clocks never need to agree.
 *
 * Exactly one holder per wallet: a claim inserts a lease or takes over an expired one with one
 * `insert .. on conflict do update .. where expired`, which PostgreSQL checks again on the latest row after
 * waiting for a concurrent claim or write to end; a write of a wallet's sync locks the wallet's lease row
 * (`fence`) and goes on only while the lease still names the writer, so a takeover waits for the write in
 * flight and the former holder's later writes fail. A lease that expired and that nobody took is still the
 * writer's: a write longer than the lease (the renewal waits for its locks) must not fail the next one.
 */
import { sql, type Kysely } from 'kysely';
import { FollowLeaseLostError, type FollowLeaseRepository, type FollowLeaseState } from './repositories.js';
import type { Database } from './schema.js';

interface FollowLeaseDatabase {
  sync_instances: { instance_id: string; heartbeat_at: number };
  wallet_follow_leases: { wallet_id: string; instance_id: string; expires_at: number };
  wallets: { id: string };
}

/** Now, in epoch milliseconds of the database's clock (the statement's time, not the transaction's). */
const NOW = sql<number>`floor(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export class KyselyFollowLeases implements FollowLeaseRepository {
  private readonly db: Kysely<FollowLeaseDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db as unknown as Kysely<FollowLeaseDatabase>;
  }

  async heartbeat(instanceId: string, ttlMs: number): Promise<FollowLeaseState> {
    await this.db
      .insertInto('sync_instances')
      .values({ instance_id: instanceId, heartbeat_at: NOW })
      .onConflict((oc) => oc.column('instance_id').doUpdateSet({ heartbeat_at: NOW }))
      .execute();
    // Renewed whether expired or not: a lease still naming this instance was taken over by nobody. Locked in the
    // order the fence locks them: a renewal beside a write of this instance's sync waits, never deadlocks.
    const held = await this.db
      .updateTable('wallet_follow_leases')
      .set({ expires_at: sql<number>`${NOW} + ${ttlMs}` })
      .where('instance_id', '=', instanceId)
      .where('wallet_id', 'in', (eb) => eb.selectFrom('wallet_follow_leases').select('wallet_id').where('instance_id', '=', instanceId).orderBy('wallet_id').forUpdate())
      .returning('wallet_id')
      .execute();
    const counts = await this.db
      .selectNoFrom([
        sql<string>`(select count(*) from sync_instances where heartbeat_at > ${NOW} - ${ttlMs})`.as('live'),
        sql<string>`(select count(*) from wallets)`.as('wallets'),
      ])
      .executeTakeFirstOrThrow();
    // Instances gone long ago are forgotten (their leases expired with them).
    await this.db.deleteFrom('sync_instances').where('heartbeat_at', '<', sql<number>`${NOW} - ${ttlMs * 10}`).execute();
    return { held: held.map((r) => r.wallet_id), liveInstances: Math.max(1, Number(counts.live)), wallets: Number(counts.wallets) };
  }

  async claim(instanceId: string, count: number, ttlMs: number): Promise<string[]> {
    if (count <= 0) return [];
    const claimed = await this.db
      .insertInto('wallet_follow_leases')
      .columns(['wallet_id', 'instance_id', 'expires_at'])
      .expression((eb) =>
        eb
          .selectFrom('wallets')
          .leftJoin('wallet_follow_leases as l', 'l.wallet_id', 'wallets.id')
          .select([sql<string>`wallets.id`.as('wallet_id'), sql<string>`${instanceId}`.as('instance_id'), sql<number>`${NOW} + ${ttlMs}`.as('expires_at')])
          .where((w) => w.or([w('l.wallet_id', 'is', null), w('l.expires_at', '<', NOW)]))
          .orderBy('wallets.id')
          .limit(count),
      )
      .onConflict((oc) =>
        oc
          .column('wallet_id')
          .doUpdateSet({ instance_id: instanceId, expires_at: sql<number>`${NOW} + ${ttlMs}` })
          .where('wallet_follow_leases.expires_at', '<', NOW),
      )
      .returning('wallet_id')
      .execute();
    return claimed.map((r) => r.wallet_id);
  }

  async release(instanceId: string, walletIds?: readonly string[]): Promise<void> {
    let query = this.db.deleteFrom('wallet_follow_leases').where('instance_id', '=', instanceId);
    if (walletIds) {
      if (walletIds.length === 0) return;
      query = query.where('wallet_id', 'in', [...walletIds]);
    } else await this.db.deleteFrom('sync_instances').where('instance_id', '=', instanceId).execute();
    await query.execute();
  }

  async fence(instanceId: string, walletIds: readonly string[]): Promise<void> {
    if (walletIds.length === 0) return;
    const ids = [...new Set(walletIds)];
    const rows = await this.db
      .selectFrom('wallet_follow_leases')
      .select('wallet_id')
      .where('wallet_id', 'in', ids)
      .where('instance_id', '=', instanceId)
      .orderBy('wallet_id') // one order for every lock taker (renewals, claims): no deadlock between them
      .forUpdate()
      .execute();
    if (rows.length === ids.length) return;
    const held = new Set(rows.map((r) => r.wallet_id));
    throw new FollowLeaseLostError(ids.filter((id) => !held.has(id)));
  }
}
