/**
 * Two instances of the service on one PostgreSQL store: a session opened on one is accepted by the
 * other, and ended everywhere at once by sign-out or a password change on either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_ADMIN_PASSWORD, type TestServer } from '../../support/server.js';
import { uniqueSchemaName } from '../../support/stores.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';

const env = { SERVICE_JWT_KEY: 'web-instances-test-signing-key-0123456789abcdef' };

describe('web sessions across two instances on PostgreSQL', () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    ensureWebAssets();
    const schema = uniqueSchemaName();
    a = await startTestServer({ database: 'postgres', postgresSchema: schema, env });
    b = await startTestServer({ database: 'postgres', postgresSchema: schema, env });
    await a.running.runtime.services.users.addUser('dora', 'dora-password-1', { admin: false });
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.dispose();
  });

  /** The same browser (cookie) talking to the other instance. */
  const on = (server: TestServer, client: WebClient) => Object.assign(new WebClient(server.url), { cookie: client.cookie });

  it('accepts on one instance the session opened on the other, and ends it everywhere at sign-out', async () => {
    const onA = new WebClient(a.url);
    expect((await onA.signIn('admin', TEST_ADMIN_PASSWORD)).status).toBe(303);
    const onB = on(b, onA);
    expect((await onB.get('/')).status).toBe(200);
    // The form token of the session works on the other instance too.
    expect((await onB.post('/sign-out', {})).status).toBe(303);
    expect((await onA.get('/')).status).toBe(303);
  });

  it('ends the sessions of both instances when the password changes on one', async () => {
    const clients: WebClient[] = [];
    for (const server of [a, b, a, b]) {
      const client = new WebClient(server.url);
      expect((await client.signIn('dora', 'dora-password-1')).status).toBe(303);
      clients.push(client);
    }
    await b.running.runtime.services.users.changePassword('dora', 'dora-password-2');
    for (const client of clients) {
      expect((await client.get('/')).status).toBe(303);
      expect((await on(a, client).get('/')).status).toBe(303);
      expect((await on(b, client).get('/')).status).toBe(303);
    }
    const after = new WebClient(a.url);
    expect((await after.signIn('dora', 'dora-password-1')).status).toBe(401);
    expect((await after.signIn('dora', 'dora-password-2')).status).toBe(303);
    expect((await on(b, after).get('/')).status).toBe(200);
  });
});
