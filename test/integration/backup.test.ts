/**
 * `wcs backup` and `wcs restore` as an operator runs them, against a real `wcs serve` process
 * writing to its SQLite store: the snapshot is consistent while writes go on, a restore refuses a
 * store in use, a store with data (without --force) and any snapshot that fails its checks.
 */
import { copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, startCliServer } from '../support/cli.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { TEST_DATABASE_URL } from '../support/stores.js';

let folder: string;
let env: Record<string, string>;
let storePath: string;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-backup-'));
  env = {
    SERVICE_DATA_FOLDER: join(folder, 'data'),
    SERVICE_PORT: '0',
    SERVICE_API_ACTIVE: 'True',
    SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
    SERVICE_LOG_LEVEL: 'info',
  };
  storePath = join(folder, 'data', 'service.sqlite');
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const admin = basicAuth('admin', TEST_ADMIN_PASSWORD);

async function createToken(api: string, description: string): Promise<{ jwt_token: string; jwt_token_id: string } | undefined> {
  const response = await request(`${api}/token`, { method: 'POST', headers: { authorization: admin }, json: { jwt_token_description: description, jwt_token_life: '1 hours' } });
  return response.status === 201 ? response.body : undefined;
}

function tokenIds(path: string): string[] {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], { id: string }>('select id from tokens').all().map((r) => r.id);
  } finally {
    db.close();
  }
}

async function withServer<T>(work: (api: string) => Promise<T>): Promise<T> {
  const server = await startCliServer(env);
  try {
    return await work(`${server.url}/api/v1alpha`);
  } finally {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }
}

describe('wcs backup', () => {
  it('writes a consistent snapshot while the service keeps writing, with every write acknowledged before it', async () => {
    const snapshot = join(folder, 'snap.sqlite');
    const { before, tokenBefore } = await withServer(async (api) => {
      const before: string[] = [];
      for (let i = 0; i < 5; i++) before.push((await createToken(api, `before ${i}`))?.jwt_token_id ?? 'failed');
      const tokenBefore = await createToken(api, 'kept');
      // Writers keep going while the backup runs.
      let writing = true;
      const writers = (async () => {
        for (let i = 0; writing; i++) await createToken(api, `during ${i}`);
      })();
      const result = await runCli(['backup', snapshot], env);
      writing = false;
      await writers;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Backed up .*service\.sqlite to .*snap\.sqlite \(schema version \d+, \d+ bytes; rows: .*tokens \d+/);
      return { before, tokenBefore };
    });
    const ids = tokenIds(snapshot);
    for (const id of [...before, tokenBefore?.jwt_token_id]) expect(ids).toContain(id);
    // One self-contained file: no log beside it, and it passes the integrity check.
    expect(existsSync(`${snapshot}-wal`)).toBe(false);
    const db = new BetterSqlite3(snapshot, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    db.close();

    // An existing file is kept unless --force.
    const again = await runCli(['backup', snapshot], env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('exists; choose another name or pass --force') });
    expect((await runCli(['backup', snapshot, '--force'], env)).code).toBe(0);
  });

  it('points to pg_dump for a PostgreSQL store, and refuses a missing store or FILE', async () => {
    const pgEnv = { ...env, SERVICE_DATABASE_URL: TEST_DATABASE_URL };
    const result = await runCli(['backup', join(folder, 'x.sqlite')], pgEnv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pg_dump');
    expect(await runCli(['restore', join(folder, 'x.sqlite')], pgEnv)).toMatchObject({ code: 2, stderr: expect.stringContaining('pg_restore') });
    expect(await runCli(['backup'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument 'FILE'") });
    expect(await runCli(['backup', join(folder, 'x.sqlite')], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('does not exist') });
    expect(await runCli(['user', 'list', '--force'], env)).toMatchObject({ code: 2 });
  });
});

describe('wcs restore', () => {
  it('refuses a running service\'s store, then a store with data without --force, then restores it', async () => {
    const snapshot = join(folder, 'snap.sqlite');
    const server = await startCliServer(env);
    const api = `${server.url}/api/v1alpha`;
    let kept: { jwt_token: string } | undefined;
    let later: { jwt_token: string } | undefined;
    try {
      kept = await createToken(api, 'in the snapshot');
      expect((await runCli(['backup', snapshot], env)).code).toBe(0);
      later = await createToken(api, 'after the snapshot');
      const refused = await runCli(['restore', snapshot, '--force'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('is in use by a running process; stop the service first');
      // Still serving its own data.
      expect((await request(`${api}/liveness`, { headers: { authorization: bearer(later?.jwt_token ?? '') } })).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    expect(tokenIds(storePath)).toHaveLength(2);
    const withoutForce = await runCli(['restore', snapshot], env);
    expect(withoutForce).toMatchObject({ code: 1, stderr: expect.stringContaining('holds data') });
    expect(tokenIds(storePath)).toHaveLength(2);

    const restored = await runCli(['restore', snapshot, '--force'], env);
    expect(restored.stderr).toBe('');
    expect(restored).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Restored .*service\.sqlite from .*snap\.sqlite/) });
    expect(tokenIds(storePath)).toHaveLength(1);
    await withServer(async (restartedApi) => {
      expect((await request(`${restartedApi}/liveness`, { headers: { authorization: bearer(kept?.jwt_token ?? '') } })).status).toBe(200);
      expect((await request(`${restartedApi}/liveness`, { headers: { authorization: bearer(later?.jwt_token ?? '') } })).status).toBe(401);
    });
  });

  it('restores into an empty data folder without --force', async () => {
    const snapshot = join(folder, 'snap.sqlite');
    await withServer(async (api) => void (await createToken(api, 'one')));
    expect((await runCli(['backup', snapshot], env)).code).toBe(0);
    const fresh = { ...env, SERVICE_DATA_FOLDER: join(folder, 'fresh') };
    const result = await runCli(['restore', snapshot], fresh);
    expect(result.code).toBe(0);
    expect(tokenIds(join(folder, 'fresh', 'service.sqlite'))).toEqual(tokenIds(snapshot));
  });

  it('refuses a snapshot that is corrupt, not a store, or of an unknown schema version, and leaves the store as it was', async () => {
    const snapshot = join(folder, 'snap.sqlite');
    await withServer(async (api) => {
      for (let i = 0; i < 30; i++) await createToken(api, `token ${i} ${'x'.repeat(200)}`);
    });
    expect((await runCli(['backup', snapshot], env)).code).toBe(0);
    const storeBefore = readFileSync(storePath);

    const corrupt = join(folder, 'corrupt.sqlite');
    copyFileSync(snapshot, corrupt);
    const fd = openSync(corrupt, 'r+');
    const pageSize = readFileSync(corrupt).readUInt16BE(16);
    // Garbage over the second half of every page after the first: tables and indexes break.
    for (let page = 1; page * pageSize < readFileSync(corrupt).length; page++) writeSync(fd, Buffer.alloc(pageSize / 2, 0xa5), 0, pageSize / 2, page * pageSize + pageSize / 2);
    closeSync(fd);

    const notAStore = join(folder, 'other.sqlite');
    new BetterSqlite3(notAStore).exec('create table notes (text text); insert into notes values (1)');
    const future = join(folder, 'future.sqlite');
    copyFileSync(snapshot, future);
    const db = new BetterSqlite3(future);
    db.prepare('insert into schema_version (version, name, applied_at) values (999, ?, 0)').run('from-the-future');
    db.close();
    const text = join(folder, 'text.sqlite');
    copyFileSync(join(folder, 'data', 'jwt-signing-key'), text);

    const cases: [string, string][] = [
      [corrupt, 'integrity'],
      [notAStore, 'not a store of this service'],
      [future, 'schema version 999, newer than this program knows'],
      [text, 'is not a SQLite database'],
      [join(folder, 'missing.sqlite'), 'does not exist'],
    ];
    for (const [file, message] of cases) {
      const result = await runCli(['restore', file, '--force'], env);
      expect(result.code, file).toBe(1);
      expect(result.stderr, file).toContain(message);
    }
    expect(readFileSync(storePath).equals(storeBefore)).toBe(true);
  });
});
