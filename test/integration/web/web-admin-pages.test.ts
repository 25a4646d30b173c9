/**
 * Administration and small page details over HTTP: refusals on the form they came from with what was
 * typed, no "Remove admin" on the only admin, labelled password boxes, "1 day left", the favicon, and
 * a key placeholder of the service's network.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, startTestServer, TEST_ADMIN_PASSWORD, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';

let server: TestServer;
let admin: WebClient;

beforeAll(async () => {
  ensureWebAssets();
  server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_LOG_LEVEL: 'warn' } });
  admin = new WebClient(server.url);
  await admin.signIn('admin', TEST_ADMIN_PASSWORD);
}, 60_000);
afterAll(() => server?.dispose());

const names = async () => (await server.running.runtime.services.users.listUsers()).map((u) => u.name);

describe('the administration page', () => {
  it('offers no "Remove admin" on the only admin, and labels every password box', async () => {
    const page = await admin.get('/admin');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Remove admin');
    expect(page.text).toContain('The only admin');
    for (const [, id] of page.text.matchAll(/<input id="([^"]+)" type="password"/g)) expect(page.text).toContain(`<label for="${id}">`);
    expect(page.text).toMatch(/<input id="password-admin" type="password"/);
  });

  it('shows a refused new user on the same form, keeping the name and the admin box, and adds nobody', async () => {
    const refused = await admin.post('/admin/users', { name: 'carol', password: 'short', admin: 'on' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<h1>Administration</h1>');
    expect(refused.text).toMatch(/id="add-user-error" role="alert">[^<]+/);
    expect(refused.text).toContain('id="new-user" name="name" required autocomplete="off" value="carol"');
    expect(refused.text).toMatch(/name="admin" checked/);
    expect(await names()).not.toContain('carol');
  });

  it('shows a refused change next to the user it concerns, and offers "Remove admin" once there are two admins', async () => {
    await server.running.runtime.services.users.addUser('bob', 'bob-password-1', { admin: false });
    const short = await admin.post('/admin/users/bob/password', { password: 'x' });
    expect(short.status).toBe(400);
    expect(short.text).toMatch(/id="user-error-bob" role="alert">[^<]+/);
    const last = await admin.post('/admin/users/admin/delete', { wallets: 'refuse' });
    expect(last.status).toBe(409);
    expect(last.text).toContain('id="user-error-admin" role="alert">User admin is the last admin and cannot be deleted');
    expect(await names()).toContain('admin');
    expect((await admin.post('/admin/users/bob/admin', { admin: 'true' })).status).toBe(303);
    expect((await admin.get('/admin')).text).toContain('Remove admin');
  });
});

describe('small details', () => {
  it('says "1 day left" of a token with a day to live', async () => {
    await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'one day', '1 days');
    const account = await admin.get('/account');
    expect(account.text).toContain('1 day left');
    expect(account.text).not.toContain('1 days left');
  });

  it('serves a favicon at /favicon.ico, also before signing in', async () => {
    const icon = await new WebClient(server.url).get('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(icon.text).toContain('<svg');
    expect((await admin.get('/')).text).toContain('<link rel="icon" href="/favicon.ico"');
  });

  it('shows a key placeholder of the service\'s network: tpub on regtest', async () => {
    const form = await admin.get('/wallets/new');
    expect(form.text).toContain(']tpub');
    expect(form.text).not.toContain(']xpub6E');
  });
});
