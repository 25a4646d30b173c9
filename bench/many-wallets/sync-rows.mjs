// The store's share of a block that moves every wallet's tip: N wallet rows in a fresh PostgreSQL schema (or, with
// `--sqlite`, a SQLite file), then rounds of (a) the sync pass's listing of every wallet's id and revision
// (`listRevisions`, the median of five calls) and (b) every wallet's sync row moved to a new tip in one transaction
// (`applySyncRows`, as a block paying none of them writes it). On PostgreSQL it also counts the updates that were
// heap-only (no index written). `--dist DIR` runs another build's store (code and schema before a change).
//
//   npm run build && node bench/many-wallets/sync-rows.mjs [--wallets 10000] [--rounds 6] [--sqlite] [--dist DIR]
//     (WCS_BENCH_DATABASE_URL, default the tests' database)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { arg } from '../support.mjs';

const WALLETS = Number(arg('wallets', 10_000));
const ROUNDS = Number(arg('rounds', 6));
const SQLITE = process.argv.includes('--sqlite');
const DIST = resolve(arg('dist', join(import.meta.dirname, '..', '..', 'dist')));
const DATABASE_URL = process.env.WCS_BENCH_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';

const schema = `bench_rows_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-rows-'));
const admin = SQLITE ? undefined : new pg.Client({ connectionString: DATABASE_URL });
await admin?.connect();
const store = SQLITE
  ? await (await import(join(DIST, 'store', 'sqlite.js'))).openSqliteStore(join(folder, 'service.sqlite'))
  : await (await import(join(DIST, 'store', 'postgres.js'))).openPostgresStore({ url: DATABASE_URL, schema, maxConnections: 4 });
try {
  await store.users.insert({ name: 'admin', passwordHash: 'x', isAdmin: true, createdAt: Date.now() });
  // Rows of the size of a 2-of-3 wallet's (two descriptors of three extended keys each).
  const key = (i, k) => `tpubD6NzVbkrYhZ4X${String(i).padStart(8, '0')}${k}`.padEnd(111, 'x');
  const ids = [];
  const started = performance.now();
  // 500 rows a transaction: a commit each would take minutes on PostgreSQL.
  for (let first = 0; first < WALLETS; first += 500) {
    const batch = Array.from({ length: Math.min(500, WALLETS - first) }, (_, k) => first + k);
    await store.transaction(async (repos) => {
      for (const i of batch) {
        const id = randomUUID();
        ids.push(id);
        const descriptor = (branch) => `wsh(sortedmulti(2,${[0, 1, 2].map((k) => `${key(i, k)}/${branch}/*`).join(',')}))#abcdefgh`;
        await repos.wallets.insert({
          id, alias: `many-${i}`, name: `Many ${i}`, description: '', ownerName: 'admin', network: 'regtest',
          receiveDescriptor: descriptor(0), changeDescriptor: descriptor(1), addressType: 'bech32',
          sigsRequired: 2, sigsTotal: 3, keys: [], gapLimit: 20, birthday: 100, createdAt: Date.now(), revision: 0, tip: null,
        }, []);
      }
    });
  }
  console.log(`${WALLETS} wallet rows written in ${((performance.now() - started) / 1000).toFixed(1)} s (${SQLITE ? 'SQLite' : 'PostgreSQL'}, ${DIST})`);
  const revisions = new Map(ids.map((id) => [id, 0]));
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const hot = async () => {
    if (SQLITE) return undefined;
    // The statistics collector reports with a delay: asked for the current figures of this backend's table.
    await admin.query('select pg_stat_clear_snapshot()');
    return (await admin.query(`select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where schemaname = $1 and relname = 'wallets'`, [schema])).rows[0];
  };
  for (let round = 0; round < ROUNDS; round++) {
    const listings = [];
    for (let k = 0; k < 5; k++) {
      const at = performance.now();
      const listed = await store.wallets.listRevisions();
      listings.push(performance.now() - at);
      if (listed.length !== WALLETS) throw new Error(`listed ${listed.length}`);
    }
    const tip = { height: 200 + round, hash: randomUUID().replaceAll('-', '').padEnd(64, '0') };
    const at = performance.now();
    const moved = await store.transaction((repos) => repos.wallets.applySyncRows(ids.map((id) => ({ sync: { walletId: id, tip, lastUsedReceive: -1, lastUsedChange: -1 }, expectedRevision: revisions.get(id) }))));
    const write = performance.now() - at;
    for (const [id, revision] of moved) revisions.set(id, revision);
    console.log(`round ${round + 1}: listing ${median(listings).toFixed(1)} ms (${Math.min(...listings).toFixed(1)}-${Math.max(...listings).toFixed(1)}), tip-only write of ${WALLETS} ${write.toFixed(0)} ms (load ${loadavg()[0].toFixed(1)})`);
  }
  if (!SQLITE) {
    await store.close();
    // A backend reports its statistics when idle, with a delay of up to ten seconds.
    await new Promise((r) => setTimeout(r, 11_000));
    const updates = await hot();
    console.log(`updates of wallet rows: ${updates.upd}, heap-only (no index entry written) ${updates.hot}`);
  }
} finally {
  await store.close().catch(() => {});
  await admin?.query(`drop schema if exists "${schema}" cascade`);
  await admin?.end();
  rmSync(folder, { recursive: true, force: true });
}
