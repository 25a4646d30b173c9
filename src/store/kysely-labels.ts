/** Wallet labels across their tables (one implementation for SQLite and PostgreSQL). */
import type { Kysely } from 'kysely';
import type { LabelRef, StoredLabel, WalletLabelRepository } from './label-records.js';
import type { WalletDatabase } from './kysely-wallets.js';

export class KyselyLabels implements WalletLabelRepository {
  private readonly db: Kysely<WalletDatabase>;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>) {
    // The label tables are wallet tables, declared with them (kysely-wallets.ts).
    this.db = db as unknown as Kysely<WalletDatabase>;
  }

  async list(walletId: string): Promise<StoredLabel[]> {
    const [txs, addresses, outputs] = await Promise.all([
      this.db.selectFrom('wallet_tx_labels').selectAll().where('wallet_id', '=', walletId).orderBy('txid').execute(),
      this.db.selectFrom('wallet_address_labels').selectAll().where('wallet_id', '=', walletId).orderBy('address').execute(),
      this.db.selectFrom('wallet_utxo_flags').selectAll().where('wallet_id', '=', walletId).orderBy('txid').orderBy('vout').execute(),
    ]);
    return [
      ...txs.map((r): StoredLabel => ({ type: 'tx', ref: r.txid, label: r.label, updatedAt: Number(r.updated_at) })),
      ...addresses.map((r): StoredLabel => ({ type: 'addr', ref: r.address, label: r.label, updatedAt: Number(r.updated_at) })),
      ...outputs.map((r): StoredLabel => ({ type: 'output', ref: `${r.txid}:${Number(r.vout)}`, label: r.label, frozen: Number(r.frozen) === 1, updatedAt: Number(r.updated_at) })),
    ];
  }

  async txLabels(walletId: string): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('wallet_tx_labels').select(['txid', 'label']).where('wallet_id', '=', walletId).execute();
    return new Map(rows.map((r) => [r.txid, r.label]));
  }

  async lock(walletId: string): Promise<boolean> {
    // A write that changes nothing still takes the row's lock (PostgreSQL) or the database's (SQLite).
    const held = await this.db.updateTable('wallets').set((eb) => ({ revision: eb.ref('revision') })).where('id', '=', walletId).executeTakeFirst();
    return Number(held.numUpdatedRows) === 1;
  }

  async find(walletId: string, refs: readonly LabelRef[]): Promise<StoredLabel[]> {
    const found: StoredLabel[] = [];
    for (const part of partsOf(refs)) {
      const { txids, addresses, outpoints } = byTable(part);
      if (txids.length > 0) {
        const rows = await this.db.selectFrom('wallet_tx_labels').selectAll().where('wallet_id', '=', walletId).where('txid', 'in', txids).execute();
        found.push(...rows.map((r): StoredLabel => ({ type: 'tx', ref: r.txid, label: r.label, updatedAt: Number(r.updated_at) })));
      }
      if (addresses.length > 0) {
        const rows = await this.db.selectFrom('wallet_address_labels').selectAll().where('wallet_id', '=', walletId).where('address', 'in', addresses).execute();
        found.push(...rows.map((r): StoredLabel => ({ type: 'addr', ref: r.address, label: r.label, updatedAt: Number(r.updated_at) })));
      }
      if (outpoints.length > 0) {
        const rows = await this.db
          .selectFrom('wallet_utxo_flags')
          .selectAll()
          .where('wallet_id', '=', walletId)
          .where((eb) => eb(eb.refTuple('txid', 'vout'), 'in', outpoints.map(([txid, vout]) => eb.tuple(txid, vout))))
          .execute();
        found.push(...rows.map((r): StoredLabel => ({ type: 'output', ref: `${r.txid}:${Number(r.vout)}`, label: r.label, frozen: Number(r.frozen) === 1, updatedAt: Number(r.updated_at) })));
      }
    }
    return found;
  }

  async write(walletId: string, labels: readonly StoredLabel[]): Promise<void> {
    const lastOfEach = [...new Map(labels.map((l) => [`${l.type} ${l.ref}`, l])).values()];
    for (const part of partsOf(lastOfEach)) {
      const { txids, addresses, outpoints } = byTable(part);
      if (txids.length > 0) await this.db.deleteFrom('wallet_tx_labels').where('wallet_id', '=', walletId).where('txid', 'in', txids).execute();
      if (addresses.length > 0) await this.db.deleteFrom('wallet_address_labels').where('wallet_id', '=', walletId).where('address', 'in', addresses).execute();
      if (outpoints.length > 0) {
        await this.db
          .deleteFrom('wallet_utxo_flags')
          .where('wallet_id', '=', walletId)
          .where((eb) => eb(eb.refTuple('txid', 'vout'), 'in', outpoints.map(([txid, vout]) => eb.tuple(txid, vout))))
          .execute();
      }
      const kept = part.filter((l) => l.label !== '' || (l.type === 'output' && l.frozen === true));
      const txRows = kept.filter((l) => l.type === 'tx').map((l) => ({ wallet_id: walletId, txid: l.ref, label: l.label, updated_at: l.updatedAt }));
      const addressRows = kept.filter((l) => l.type === 'addr').map((l) => ({ wallet_id: walletId, address: l.ref, label: l.label, updated_at: l.updatedAt }));
      const outputRows = kept
        .filter((l) => l.type === 'output')
        .map((l) => {
          const [txid, vout] = outpointOf(l.ref);
          return { wallet_id: walletId, txid, vout, frozen: l.frozen ? 1 : 0, label: l.label, updated_at: l.updatedAt };
        });
      if (txRows.length > 0) await this.db.insertInto('wallet_tx_labels').values(txRows).execute();
      if (addressRows.length > 0) await this.db.insertInto('wallet_address_labels').values(addressRows).execute();
      if (outputRows.length > 0) await this.db.insertInto('wallet_utxo_flags').values(outputRows).execute();
    }
  }

  async setTxLabel(walletId: string, txid: string, label: string, at: number): Promise<void> {
    await this.db.deleteFrom('wallet_tx_labels').where('wallet_id', '=', walletId).where('txid', '=', txid).execute();
    if (label !== '') await this.db.insertInto('wallet_tx_labels').values({ wallet_id: walletId, txid, label, updated_at: at }).execute();
  }
}

/** References per statement: within both stores' limits of parameters (6 per output row). */
const PART = 500;

function* partsOf<T>(items: readonly T[]): Generator<readonly T[]> {
  for (let from = 0; from < items.length; from += PART) yield items.slice(from, from + PART);
}

const outpointOf = (ref: string): [string, number] => {
  const at = ref.lastIndexOf(':');
  return [ref.slice(0, at), Number(ref.slice(at + 1))];
};

/** The references of each table; one reference appears once. */
function byTable(refs: readonly LabelRef[]): { txids: string[]; addresses: string[]; outpoints: [string, number][] } {
  const unique = [...new Map(refs.map((r) => [`${r.type} ${r.ref}`, r])).values()];
  return {
    txids: unique.filter((r) => r.type === 'tx').map((r) => r.ref),
    addresses: unique.filter((r) => r.type === 'addr').map((r) => r.ref),
    outpoints: unique.filter((r) => r.type === 'output').map((r) => outpointOf(r.ref)),
  };
}
