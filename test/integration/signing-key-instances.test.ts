/**
 * Instances on one PostgreSQL schema with different JWT signing keys: the database keeps the first
 * key's fingerprint (never the key), and an instance with another key refuses to start with a clear
 * reason instead of answering 401 to every token the others issued. `--replace-jwt-key` replaces it.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCliServer } from '../support/cli.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../support/stores.js';

const KEY_A = 'first-instance-signing-key-0123456789abcdef';
const KEY_B = 'second-instance-signing-key-0123456789abcdef';

let schema: string;
let folder: string;
let url: string;

beforeAll(async () => {
  schema = uniqueSchemaName();
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query(`create schema "${schema}"`);
  await client.end();
  url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  folder = mkdtempSync(join(tmpdir(), 'wcs-keys-'));
});
afterAll(async () => {
  await dropPostgresSchema(schema);
  rmSync(folder, { recursive: true, force: true });
});

function envOf(name: string, key: string | undefined): Record<string, string> {
  return {
    SERVICE_DATA_FOLDER: join(folder, name),
    SERVICE_DATABASE_URL: url,
    SERVICE_PORT: '0',
    SERVICE_API_ACTIVE: 'True',
    SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
    SERVICE_LOG_LEVEL: 'info',
    SERVICE_SYNC_INTERVAL: '0',
    ...(key !== undefined ? { SERVICE_JWT_KEY: key } : {}),
  };
}

async function storedFingerprints(): Promise<string[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(`select value from "${schema}".service_settings where name = 'jwt_signing_key_fingerprint'`)).rows.map((r) => r.value as string);
  } finally {
    await client.end();
  }
}

async function tokenOn(api: string): Promise<string> {
  const made = await request(`${api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) }, json: { jwt_token_description: `t-${Date.now()}`, jwt_token_life: '1 hours' } });
  expect(made.status, made.text).toBe(201);
  return made.body.jwt_token as string;
}

describe('instances with different JWT signing keys on one PostgreSQL schema', () => {
  it('the second refuses to start, the same key starts, and --replace-jwt-key replaces the key on purpose', async () => {
    const first = await startCliServer(envOf('a', KEY_A));
    let token: string;
    try {
      token = await tokenOn(`${first.url}/api/v1alpha`);
      const fingerprints = await storedFingerprints();
      expect(fingerprints).toEqual([createHmac('sha256', KEY_A).update('wcs jwt signing key fingerprint v1').digest('hex')]);
      expect(fingerprints[0]).not.toContain(KEY_A);

      // Another operator key, and no key at all (a key file of its own): both refused, exit 2, nothing secret said.
      for (const key of [KEY_B, undefined]) {
        const refused = await runCli(['serve'], envOf(key ? 'b' : 'c', key));
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/^wcs: The JWT signing key \(SERVICE_JWT_KEY, or the key file in the data folder\) differs from the key of the other instances on this database/);
        expect(refused.stderr).toContain('give every instance the same SERVICE_JWT_KEY');
        expect(refused.stderr.split('\n').filter((l) => l.startsWith('wcs:'))).toHaveLength(1);
        for (const leak of [KEY_A, KEY_B, 'select', 'service_settings', '    at ', fingerprints[0]!, folder]) expect(refused.stderr).not.toContain(leak);
        expect(refused.stdout).not.toContain('"service started"');
      }
      expect(await storedFingerprints()).toEqual(fingerprints);

      // The same key on another instance: the first instance's token works there.
      const same = await startCliServer(envOf('d', KEY_A));
      try {
        expect((await request(`${same.url}/api/v1alpha/liveness`, { headers: { authorization: bearer(token) } })).status).toBe(200);
      } finally {
        same.child.kill('SIGTERM');
        expect(await same.exited).toBe(0);
      }
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }

    // Replacing the key on purpose: the old tokens stop working, and the old key is now the refused one.
    const replaced = await startCliServer({ ...envOf('b', KEY_B) }, ['--replace-jwt-key']);
    try {
      expect((await request(`${replaced.url}/api/v1alpha/liveness`, { headers: { authorization: bearer(token) } })).status).toBe(401);
      expect((await storedFingerprints())[0]).toBe(createHmac('sha256', KEY_B).update('wcs jwt signing key fingerprint v1').digest('hex'));
    } finally {
      replaced.child.kill('SIGTERM');
      expect(await replaced.exited).toBe(0);
    }
    expect((await runCli(['serve'], envOf('a', KEY_A))).code).toBe(2);
  }, 90_000);
});
