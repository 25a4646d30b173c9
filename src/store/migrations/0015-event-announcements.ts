import type { Migration } from './types.js';

/**
 * Transaction events are recorded once per wallet: each carries what it announces (kind and txid; for a
 * confirmation also the depth and the block), and an event whose announcement its wallet already has is not
 * recorded again (a rescan finds the same transactions). The events recorded before this version get
 * theirs here, so a rescan after the upgrade does not announce the wallet's history again.
 */
export const eventAnnouncements: Migration = {
  version: 15,
  name: 'event-announcements',
  async up(db) {
    await db.schema.alterTable('events').addColumn('announcement', 'text').execute();
    await db.schema.createIndex('events_wallet_announcement').on('events').columns(['wallet_id', 'announcement']).execute();
    const types = ['transaction.received', 'transaction.sent', 'transaction.replaced', 'transaction.confirmed'];
    for (let after = -1; ; ) {
      const rows: Array<{ seq: number | string; type: string; data: string }> = await db
        .selectFrom('events')
        .select(['seq', 'type', 'data'])
        .where('type', 'in', types)
        .where('seq', '>', after)
        .orderBy('seq')
        .limit(1000)
        .execute();
      if (rows.length === 0) break;
      for (const row of rows) {
        const data = JSON.parse(row.data) as { txid?: unknown; confirmations?: unknown; block_hash?: unknown };
        if (typeof data.txid !== 'string') continue;
        const announcement = row.type === 'transaction.confirmed' ? `${row.type}:${data.txid}:${String(data.confirmations)}:${String(data.block_hash)}` : `${row.type}:${data.txid}`;
        await db.updateTable('events').set({ announcement }).where('seq', '=', row.seq).execute();
      }
      after = Number(rows.at(-1)!.seq);
    }
  },
};
