/**
 * Reads kept in memory on SQLite (docs/adr/0008-request-path-caches.md): a change committed by the
 * store itself shows at the next read; one committed by another connection (as a CLI command
 * would) shows once a millisecond has passed; kept values cannot be changed by a caller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, StoredWallet, TokenRecord } from '../../../src/store/repositories.js';
import { openSqliteStore } from '../../../src/store/sqlite.js';

const token: TokenRecord = { id: 'token-1', userName: 'alice', description: 'laptop', tokenHash: 'a'.repeat(64), lifeSeconds: 86_400, createdAt: 1, expiresAt: 9_000_000_000_000 };
const wallet: StoredWallet = {
  id: 'w-1', alias: 'hot', name: 'Hot', description: '', ownerName: 'alice', network: 'regtest',
  receiveDescriptor: 'wpkh(tpub/0/*)#aaaaaaaa', changeDescriptor: 'wpkh(tpub/1/*)#bbbbbbbb', addressType: 'bech32',
  sigsRequired: 1, sigsTotal: 1, keys: [], gapLimit: 20, birthday: 0, createdAt: 1, revision: 0, tip: null,
};

describe('SQLite reads kept while nothing changed', () => {
  let folder: string;
  let path: string;
  let store: Store;
  let other: BetterSqlite3.Database;
  /** The store's clock: still unless a test moves it, so only the commit signal can tell the store's own changes. */
  let clock: number;

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'wcs-kept-'));
    path = join(folder, 'service.sqlite');
    clock = 0;
    store = await openSqliteStore(path, { now: () => clock });
    other = new BetterSqlite3(path);
    for (const name of ['alice', 'bob']) await store.users.insert({ name, passwordHash: 'x', isAdmin: false, createdAt: 1 });
    await store.tokens.insert(token);
    await store.wallets.insert(wallet, []);
  });
  afterEach(async () => {
    other.close();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('shows the store\'s own changes at the next read, with no time passing', async () => {
    expect(await store.tokens.findWithUser(token.id)).toMatchObject({ userIsAdmin: false });
    expect((await store.wallets.listAccessible('bob')).map((w) => w.wallet.alias)).toEqual([]);
    await store.users.setAdmin('alice', true);
    await store.wallets.replaceShares(wallet.id, [{ userName: 'bob', access: 'read' }]);
    expect(await store.tokens.findWithUser(token.id)).toMatchObject({ userIsAdmin: true });
    expect((await store.wallets.listAccessible('bob')).map((w) => [w.wallet.alias, w.access])).toEqual([['hot', 'read']]);
    await store.transaction(async (repos) => {
      await repos.tokens.deleteAllForUser('alice');
      await repos.wallets.replaceShares(wallet.id, []);
    });
    expect(await store.tokens.findWithUser(token.id)).toBeUndefined();
    expect(await store.wallets.listAccessible('bob')).toEqual([]);
  });

  it('shows another connection\'s commits once a millisecond has passed', async () => {
    expect(await store.tokens.findWithUser(token.id)).toBeDefined();
    expect(await store.wallets.listAccessible('bob')).toEqual([]);
    other.prepare("insert into wallet_shares (wallet_id, user_name, access) values ('w-1', 'bob', 'spend')").run();
    other.prepare('delete from tokens where id = ?').run(token.id);
    clock += 0.5;
    expect(await store.tokens.findWithUser(token.id)).toBeDefined();
    clock += 0.5;
    expect(await store.tokens.findWithUser(token.id)).toBeUndefined();
    expect((await store.wallets.listAccessible('bob')).map((w) => w.access)).toEqual(['spend']);
  });

  it('hands out kept values that no caller can change', async () => {
    const [first] = await store.wallets.listAccessible('alice');
    expect(() => {
      (first!.wallet as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect((await store.wallets.listAccessible('alice'))[0]!.wallet.name).toBe('Hot');
  });
});
