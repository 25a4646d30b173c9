/** Users, tokens and the signing key survive a restart, on SQLite and on PostgreSQL. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer } from '../support/server.js';

describe.each(['sqlite', 'postgres'] as const)('restart on %s', (database) => {
  it('keeps users, tokens and the signing key', async () => {
    const first = await startTestServer({ database });
    await first.running.runtime.services.users.addUser('dave', 'dave-password', { admin: false });
    const token = await createToken(first, 'dave', 'dave-password', 'survives');
    const keyFile = join(first.dataFolder, 'jwt-signing-key');
    const key = readFileSync(keyFile, 'utf8');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    await first.stop();

    const second = await startTestServer({ database, dataFolder: first.dataFolder, ...(first.postgresSchema ? { postgresSchema: first.postgresSchema } : {}) });
    try {
      expect(readFileSync(keyFile, 'utf8')).toBe(key);
      expect(second.bootstrap().created).toBe(false);
      expect((await request(`${second.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
      const listed = await request(`${second.api}/token`, { headers: { authorization: basicAuth('dave', 'dave-password') } });
      expect(Object.keys(listed.body.jwt_tokens)).toEqual([token.jwt_token_id]);
      expect((await request(`${second.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
    } finally {
      await second.dispose();
      await first.dispose();
    }
  });
});

describe('first start', () => {
  it('without SERVICE_ADMIN_PASSWORD creates admin with a random password, shown once and kept in a 0600 file', async () => {
    const first = await startTestServer({ configure: (c) => ({ ...c, adminPassword: undefined }) });
    try {
      const file = join(first.dataFolder, 'initial-admin-password');
      const password = readFileSync(file, 'utf8').trim();
      expect(password).toMatch(/^[A-Za-z2-9]{24}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(first.announcements).toHaveLength(1);
      expect(first.announcements[0]).toContain(password);
      expect(first.logs.join('')).not.toContain(password);
      expect((await request(`${first.api}/token`, { headers: { authorization: basicAuth('admin', password) } })).status).toBe(200);
      await first.stop();
      const second = await startTestServer({ dataFolder: first.dataFolder, configure: (c) => ({ ...c, adminPassword: undefined }) });
      expect(second.announcements).toEqual([]);
      expect(readFileSync(file, 'utf8').trim()).toBe(password);
      await second.dispose();
    } finally {
      await first.dispose();
    }
  });

  it('uses the operator\'s JWT key instead of a key file', async () => {
    const server = await startTestServer({ env: { SERVICE_JWT_KEY: 'k'.repeat(40) } });
    try {
      const token = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'operator-key');
      const { createHmac } = await import('node:crypto');
      const [h, p, s] = token.jwt_token.split('.');
      expect(createHmac('sha256', 'k'.repeat(40)).update(`${h}.${p}`).digest('base64url')).toBe(s);
    } finally {
      await server.dispose();
    }
  });
});
