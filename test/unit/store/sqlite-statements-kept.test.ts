/**
 * The SQLite store leaves no statement of better-sqlite3 to the garbage collector while it is open: on
 * Node.js 24.19 and newer, better-sqlite3 12 aborts the whole process when the collector finalizes one outside
 * JavaScript (an idle collection). So `pragma()`, which prepares a statement per call, is never used, and each
 * SQL text is prepared once per connection and kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../../../src/store/sqlite.js';

afterEach(() => vi.restoreAllMocks());

it('opening and using the store prepares each SQL text once per connection and never calls pragma()', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-kept-statements-'));
  const prepared = new Map<BetterSqlite3.Database, string[]>();
  const prepare = BetterSqlite3.prototype.prepare;
  vi.spyOn(BetterSqlite3.prototype, 'prepare').mockImplementation(function (this: BetterSqlite3.Database, sql: string) {
    prepared.set(this, [...(prepared.get(this) ?? []), sql]);
    return prepare.call(this, sql);
  } as typeof prepare);
  const pragma = vi.spyOn(BetterSqlite3.prototype, 'pragma');
  try {
    const store = await openSqliteStore(join(folder, 'service.sqlite'));
    for (let round = 0; round < 3; round++) {
      const user = { name: `user-${round}`, passwordHash: 'h', isAdmin: round === 0, createdAt: round };
      await store.users.insert(user);
      expect(await store.users.find(user.name)).toEqual(user);
      expect(await store.users.count()).toBe(round + 1);
      await store.transaction(async (tx) => tx.users.updatePasswordHash(user.name, 'h2'));
    }
    await store.close();
    expect(pragma).not.toHaveBeenCalled();
    expect(prepared.size).toBeGreaterThan(0);
    for (const texts of prepared.values()) expect(texts.length).toBe(new Set(texts).size);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
