/**
 * The benchmark's wallets: 2-of-3 `wsh(sortedmulti)` wallets, each with keys of its own, written straight into a
 * store as a first sync leaves them. Shared by run.mjs (start and reads) and blocks.mjs (blocks reaching them).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../dist/config.js';
import { createRuntime } from '../../dist/main.js';
import { addChecksum, DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { derivePath, encodeExtendedPublicKey, parseExtendedPublicKey } from '../../dist/core/keys/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { toHex } from '../../dist/core/bytes.js';
import pg from 'pg';

const root = resolve(import.meta.dirname, '../..');
const fixture = JSON.parse(readFileSync(join(root, 'test/fixtures/regtest/wallets.json'), 'utf8')).w_wsh2of3;

/** Wallet `i`'s descriptors: child `i` of each of the fixture's three keys, so that no two wallets share a script. */
export function descriptorsOf(i) {
  const keys = fixture.keys.map((k) => encodeExtendedPublicKey(derivePath(parseExtendedPublicKey(k.tpub, NETWORKS.regtest), [i]), NETWORKS.regtest));
  return [0, 1].map((branch) => addChecksum(`wsh(sortedmulti(2,${keys.map((k) => `${k}/${branch}/*`).join(',')}))`));
}

/** `count` wallets as a first sync leaves them: the gap-limit window of both branches stored, at the node's tip. Returns their ids. */
export async function writeWallets(env, tip, count) {
  const runtime = await createRuntime(loadConfig({ env, flags: [] }), { chain: null });
  const ids = [];
  try {
    const { store } = runtime;
    await runtime.services.users.bootstrapAdmin('bench-admin-password');
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      ids.push(id);
      const [receiveDescriptor, changeDescriptor] = descriptorsOf(i);
      const scripts = [receiveDescriptor, changeDescriptor].map((d) => new DescriptorDeriver(parseDescriptor(d, NETWORKS.regtest)).deriveRange(0, 20).map((o) => toHex(o.scriptPubKey)));
      await store.wallets.insert({
        id, alias: `many-${i}`, name: `Many ${i}`, description: '', ownerName: 'admin', network: 'regtest',
        receiveDescriptor, changeDescriptor, addressType: 'bech32',
        sigsRequired: 2, sigsTotal: 3, keys: [], gapLimit: 20, birthday: tip.height, createdAt: Date.now(), revision: 0, tip: null,
      }, []);
      const addressesAdded = scripts.flatMap((list, branch) => list.map((script, index) => ({ walletId: id, branch, index, script })));
      const sync = { walletId: id, tip, lastUsedReceive: -1, lastUsedChange: -1 };
      await store.transaction((repos) => repos.wallets.applyChange({ walletId: id, addressesAdded, transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [], sync }, 0));
    }
  } finally {
    await runtime.close();
  }
  return ids;
}

/**
 * With `--postgres`: a schema of its own at `WCS_BENCH_DATABASE_URL` (by default the tests' database), created now;
 * `env` points a service at it, `drop()` removes it. Without: SQLite in the service's data folder (empty `env`).
 */
export async function benchDatabase(postgres, prefix) {
  if (!postgres) return { env: {}, drop: async () => {} };
  const url = process.env.WCS_BENCH_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
  const schema = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const onPostgres = async (sql) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await onPostgres(`create schema "${schema}"`);
  return {
    env: { SERVICE_DATABASE_URL: `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, SERVICE_JWT_KEY: `${prefix}-signing-key-0123456789abcdef` },
    drop: () => onPostgres(`drop schema "${schema}" cascade`),
  };
}
