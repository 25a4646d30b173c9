/** The `wcs` command as a subprocess: user management (password from stdin), config errors, serve + SIGTERM. */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, startCliServer } from '../support/cli.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer } from '../support/server.js';

let folder: string;
let env: Record<string, string>;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-cli-'));
  env = { SERVICE_DATA_FOLDER: folder, SERVICE_LOG_LEVEL: 'info' };
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('wcs user', () => {
  it('adds, lists, changes the password of and deletes users', async () => {
    expect(await runCli(['user', 'add', 'alice'], env, 'alice-password\n')).toMatchObject({ code: 0, stdout: 'Added user alice\n' });
    expect(await runCli(['user', 'add', 'root', '--admin'], env, 'root-password\n')).toMatchObject({ code: 0, stdout: 'Added user root (admin)\n' });
    const list = await runCli(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 2))).toEqual([['alice', 'user'], ['root', 'admin']]);

    expect(await runCli(['user', 'add', 'alice'], env, 'another-password\n')).toMatchObject({ code: 1, stderr: 'wcs: User alice already exists\n' });
    expect(await runCli(['user', 'add', 'shorty'], env, 'short\n')).toMatchObject({ code: 1, stderr: 'wcs: password must be at least 8 characters\n' });
    expect(await runCli(['user', 'add', 'bad name'], env, 'long-enough-password\n')).toMatchObject({ code: 1 });
    expect(await runCli(['user', 'add', 'nopass'], env, '')).toMatchObject({ code: 1, stderr: expect.stringContaining('No password on stdin') });

    expect(await runCli(['user', 'delete', 'alice'], env)).toMatchObject({ code: 0, stdout: 'Deleted user alice and their tokens\n' });
    expect(await runCli(['user', 'delete', 'alice'], env)).toMatchObject({ code: 1, stderr: 'wcs: User alice does not exist\n' });
    expect(await runCli(['user', 'delete', 'root'], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('last admin') });
  });

  it('passwd revokes the user\'s tokens on the running server, and the new password works', async () => {
    const server = await startTestServer({ dataFolder: folder });
    try {
      const token = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'cli-revoked');
      expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
      const result = await runCli(['user', 'passwd', 'admin'], env, 'brand-new-password\n');
      expect(result).toMatchObject({ code: 0, stdout: 'Changed the password of admin; revoked 1 token(s)\n' });
      expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(401);
      expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', 'brand-new-password') } })).status).toBe(200);
      expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(401);
    } finally {
      await server.dispose();
    }
  });

  it('reports usage errors with exit code 2', async () => {
    expect(await runCli(['frobnicate'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown command frobnicate') });
    expect(await runCli(['user', 'add'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('needs a user name') });
    expect(await runCli(['user', 'list', '--admin'], env)).toMatchObject({ code: 2 });
    expect((await runCli(['help'], env)).stdout).toContain('user passwd NAME');
    expect((await runCli(['--version'], env)).stdout).toBe('0.1.0\n');
  });
});

describe('wcs serve', () => {
  it('refuses a bad setting with one line naming it, before starting', async () => {
    const result = await runCli(['serve'], { ...env, SERVICE_PORT: 'eighty' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('wcs: Invalid setting SERVICE_PORT (from SERVICE_PORT): must be a whole number from 0 to 65535, got "eighty"\n');
    const flag = await runCli(['serve', '--network', 'dogecoin'], env);
    expect(flag.stderr).toMatch(/^wcs: Invalid setting SERVICE_NETWORK \(from --network\)/);
  });

  it('finishes an in-flight request on SIGTERM, then closes the store and exits 0', async () => {
    const server = await startCliServer({ ...env, SERVICE_PORT: '0', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD });
    try {
      const body = JSON.stringify({ jwt_token_description: 'in-flight', jwt_token_life: '1 hours' });
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${server.url}/api/v1alpha/token`, {
          method: 'POST',
          headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        // Half the body now, SIGTERM, the rest afterwards: the request is in flight during shutdown.
        req.write(body.slice(0, 10));
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(10)), 300);
        }, 300);
      });
      const answered = await response;
      expect(answered.status).toBe(201);
      expect(JSON.parse(answered.body).message).toBe('Token generated');
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain('"msg":"shutting down"');
      expect(server.output()).toContain('"msg":"service stopped"');
      await expect(fetch(`${server.url}/healthz/live`)).rejects.toThrow();
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});

describe('wcs with SERVICE_DATABASE_URL=postgres://...', () => {
  it('manages users in PostgreSQL through the configured URL', async () => {
    const { TEST_DATABASE_URL, uniqueSchemaName, dropPostgresSchema } = await import('../support/stores.js');
    const pg = (await import('pg')).default;
    const schema = uniqueSchemaName();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    await client.end();
    try {
      const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const pgEnv = { ...env, SERVICE_DATABASE_URL: url };
      expect(await runCli(['user', 'add', 'pguser', '--admin'], pgEnv, 'pg-user-password\n')).toMatchObject({ code: 0 });
      expect((await runCli(['user', 'list'], pgEnv)).stdout).toMatch(/^pguser\tadmin\t/);
      const check = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await check.connect();
      const rows = await check.query(`select name, is_admin from "${schema}".users`);
      await check.end();
      expect(rows.rows).toEqual([{ name: 'pguser', is_admin: 1 }]);
    } finally {
      await dropPostgresSchema(schema);
    }
  });
});
