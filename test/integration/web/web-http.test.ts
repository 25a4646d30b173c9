/**
 * The web interface over HTTP with the real server and store: sign-in and sessions, the form token
 * and cross-site refusals, escaping, permissions, the setting that turns it off, its headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, TEST_ADMIN_PASSWORD, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from '../wallet-helpers.js';

let world: WalletWorld;
let base: string;

beforeAll(async () => {
  ensureWebAssets();
  world = await startWalletWorld({ snapshot: 5 });
  base = world.server.url;
  const users = world.server.running.runtime.services.users;
  await users.addUser('reader', 'reader-password-1', { admin: false });
  await users.addUser('spender', 'spender-password-1', { admin: false });
  const w = wallets.w_wsh2of3!;
  const created = await request(`${world.server.api}/wallets`, {
    method: 'POST',
    headers: world.auth,
    json: {
      name: 'Family <script>alert(1)</script>',
      alias: 'family',
      description: '<img src=x onerror=alert(2)>',
      recv_descriptor: w.recv_descriptor,
      change_descriptor: w.change_descriptor,
      birthday: 0,
      shared_with: [{ user: 'reader', access: 'read' }, { user: 'spender', access: 'spend' }],
    },
  });
  expect(created.status, created.text).toBe(201);
  await world.server.running.runtime.services.sync.runOnce();
}, 60_000);
afterAll(() => world?.close());

describe('signing in and out', () => {
  it('sends a visitor without a session to the sign-in page, and signs in with the same users', async () => {
    const client = new WebClient(base);
    const first = await client.get('/');
    expect(first.status).toBe(303);
    expect(first.location).toBe('/sign-in?next=%2F');
    const wrong = await client.signIn('admin', 'not the password');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong user name or password.');
    expect(client.cookie).toBeUndefined();
    const ok = await client.signIn('admin', TEST_ADMIN_PASSWORD);
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/');
    const cookieLine = ok.headers.getSetCookie().find((l) => l.startsWith('wcs_session='))!;
    expect(cookieLine).toMatch(/HttpOnly/i);
    expect(cookieLine).toMatch(/SameSite=Lax/i);
    expect(cookieLine).not.toMatch(/Secure/i); // plain HTTP here
    const list = await client.get('/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('href="/wallets/family"');
  });

  it('keeps only a hash of the session id in the store, and any instance sharing it accepts the cookie', async () => {
    const client = new WebClient(base);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const id = client.cookie!.split('=')[1]!;
    const store = world.server.running.runtime.store;
    const { createHash } = await import('node:crypto');
    expect(await store.webSessions.findValid(id, Date.now())).toBeUndefined();
    expect(await store.webSessions.findValid(createHash('sha256').update(id).digest('hex'), Date.now())).toBeDefined();
  });

  it('sign-out ends the session: the old cookie no longer opens a page', async () => {
    const client = new WebClient(base);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const cookie = client.cookie;
    const out = await client.post('/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.location).toBe('/sign-in');
    const replay = new WebClient(base);
    replay.cookie = cookie;
    expect((await replay.get('/')).status).toBe(303);
  });

  it('a password change and the user\'s deletion end their sessions', async () => {
    const users = world.server.running.runtime.services.users;
    await users.addUser('temp', 'temp-password-1', { admin: false });
    const client = new WebClient(base);
    await client.signIn('temp', 'temp-password-1');
    expect((await client.get('/')).status).toBe(200);
    await users.changePassword('temp', 'temp-password-2');
    expect((await client.get('/')).status).toBe(303);
    await client.signIn('temp', 'temp-password-2');
    expect((await client.get('/')).status).toBe(200);
    await users.deleteUser('temp');
    expect((await client.get('/')).status).toBe(303);
  });

  it('counts failed sign-ins with the same limiter as the token endpoint', async () => {
    const server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '2' } });
    try {
      const client = new WebClient(server.url);
      expect((await client.signIn('admin', 'wrong-1')).status).toBe(401);
      expect((await client.signIn('admin', 'wrong-2')).status).toBe(401);
      const limited = await client.signIn('admin', TEST_ADMIN_PASSWORD);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      const token = await request(`${server.api}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`admin:${TEST_ADMIN_PASSWORD}`).toString('base64')}` },
        json: { description: 'after web failures' },
      });
      expect(token.status).toBe(429);
    } finally {
      await server.dispose();
    }
  });

  it('never follows a sign-in to another site', async () => {
    const client = new WebClient(base);
    const ok = await client.post('/sign-in', { user: 'admin', password: TEST_ADMIN_PASSWORD, next: '//evil.example/' }, { csrf: null });
    expect(ok.location).toBe('/');
  });
});

describe('cross-site requests', () => {
  it('refuses a form post from another origin, and one without the session\'s form token, changing nothing', async () => {
    const client = new WebClient(base);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const before = await world.server.running.runtime.services.wallets.reads.addresses({ userName: 'admin', isAdmin: true }, 'family', 0, 0, 1);
    const address = before[0]!.address;
    const foreign = await client.post('/wallets/family/labels', { address, label: 'forged' }, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    const tokenless = await client.post('/wallets/family/labels', { address, label: 'forged' }, { csrf: 'not-the-token' });
    expect(tokenless.status).toBe(403);
    const missing = await client.post('/wallets/family/labels', { address, label: 'forged' }, { csrf: null });
    expect(missing.status).toBe(403);
    const after = await world.server.running.runtime.services.wallets.reads.addresses({ userName: 'admin', isAdmin: true }, 'family', 0, 0, 1);
    expect(after[0]!.label).toBe(before[0]!.label);
    const real = await client.post('/wallets/family/labels', { address, label: 'from the page', back: '/wallets/family' });
    expect(real.status).toBe(303);
    const labelled = await world.server.running.runtime.services.wallets.reads.addresses({ userName: 'admin', isAdmin: true }, 'family', 0, 0, 1);
    expect(labelled[0]!.label).toBe('from the page');
  });
});

describe('what pages show', () => {
  it('escapes names and descriptions others stored, and serves pages under a strict CSP with its own assets', async () => {
    const client = new WebClient(base);
    await client.signIn('reader', 'reader-password-1');
    for (const path of ['/', '/wallets/family']) {
      const page = await client.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('<script>alert(1)</script>');
      expect(page.text).not.toContain('<img src=x');
      expect(page.text).toContain('Family &lt;script&gt;alert(1)&lt;/script&gt;');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc="\/assets\/)/);
      expect(page.text).not.toMatch(/\sstyle="/);
      expect(page.text).not.toMatch(/(src|href|action)="(https?:)?\/\//);
    }
    const script = /src="(\/assets\/app\.js\?v=[0-9a-f]+)"/.exec((await client.get('/')).text)![1]!;
    const asset = await client.get(script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
  });

  it('lets browsers keep an asset for good only at its current version, and never an error', async () => {
    const client = new WebClient(base);
    const script = /src="(\/assets\/app\.js\?v=[0-9a-f]+)"/.exec((await client.get('/sign-in')).text)![1]!;
    const current = await client.get(script);
    expect(current.status).toBe(200);
    expect(current.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // Another version's URL (a newer release's page, answered by this instance) or none: the file, not kept.
    for (const path of ['/assets/app.js?v=000000000000', '/assets/app.js']) {
      const other = await client.get(path);
      expect(other.status, path).toBe(200);
      expect(other.headers.get('cache-control'), path).toBe('no-store');
    }
    const missing = await client.get('/assets/nothing.js?v=000000000000');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    const unsatisfiable = await request(`${base}${script}`, { headers: { range: 'bytes=99999999-' } });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get('cache-control')).toBe('no-store');
  });

  it('shows a read user the wallet without spending controls, and refuses their spending requests', async () => {
    const reader = new WebClient(base);
    await reader.signIn('reader', 'reader-password-1');
    const page = await reader.get('/wallets/family');
    expect(page.status).toBe(200);
    expect(page.text).toContain('your access: read');
    expect(page.text).not.toContain('/wallets/family/send');
    expect(page.text).not.toContain('/wallets/family/rescan');
    expect((await reader.get('/wallets/family/send')).status).toBe(404);
    const refused = await reader.post('/wallets/family/send', { address: 'bcrt1qxyz', amount: '0.1', unit: 'btc', action: 'create' });
    expect(refused.status).toBe(404);
    const spender = new WebClient(base);
    await spender.signIn('spender', 'spender-password-1');
    const spendPage = await spender.get('/wallets/family');
    expect(spendPage.text).toContain('/wallets/family/send');
    expect(spendPage.text).not.toContain('/wallets/family/rescan');
  });

  it('shows the receive address with its QR code and derivation, and an empty state without wallets', async () => {
    const admin = new WebClient(base);
    await admin.signIn('admin', TEST_ADMIN_PASSWORD);
    const page = await admin.get('/wallets/family');
    const details = await world.server.running.runtime.services.wallets.reads.details({ userName: 'admin', isAdmin: true }, 'family', { limit: 0 });
    expect(page.text).toContain(`data-receive-address>${details.address}<`);
    expect(page.text).toContain('<svg');
    expect(page.text).toContain(`/0/${details.address_index}</code>`);
    const lonely = new WebClient(base);
    await world.server.running.runtime.services.users.addUser('lonely', 'lonely-password-1', { admin: false });
    await lonely.signIn('lonely', 'lonely-password-1');
    expect((await lonely.get('/')).text).toContain('No wallets yet');
  });

  it('refuses the administration pages to a user who is not an admin', async () => {
    const reader = new WebClient(base);
    await reader.signIn('reader', 'reader-password-1');
    expect((await reader.get('/admin')).status).toBe(403);
    expect((await reader.post('/admin/users', { name: 'intruder', password: 'intruder-password' })).status).toBe(403);
    expect((await world.server.running.runtime.services.users.listUsers()).map((u) => u.name)).not.toContain('intruder');
  });
});

describe('forms with refusals', () => {
  it('keeps a refused wallet form with its values, the refusal next to the key field, and adds nothing', async () => {
    const client = new WebClient(base);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const before = (await world.server.running.runtime.services.wallets.reads.list({ userName: 'admin', isAdmin: true })).length;
    const page = await client.post('/wallets/new', {
      mode: 'policy',
      name: 'Broken <i>keys</i>',
      type: 'wsh-sortedmulti',
      threshold: '2',
      key: ['not a key', 'also not'],
      key_label: ['Alice', 'Bob'],
    });
    expect(page.status).toBe(400);
    expect(page.text).toContain('value="Broken &lt;i&gt;keys&lt;/i&gt;"');
    expect(page.text).toMatch(/class="field-error" id="key-0-error"|class="field-error" id="(threshold|keys|policy)-error"/);
    expect((await world.server.running.runtime.services.wallets.reads.list({ userName: 'admin', isAdmin: true })).length).toBe(before);
  });

  it('adds a wallet by descriptor from the form and shows it', async () => {
    const client = new WebClient(base);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const w = wallets.w_wpkh!;
    const descriptor = w.recv_descriptor.replace('/0/*', '/<0;1>/*').replace(/#.*$/, '');
    const made = await client.post('/wallets/new', { mode: 'descriptor', name: 'Single key', descriptor, birthday: '0', shares: 'reader read' });
    expect(made.status, made.text.slice(0, 2000)).toBe(303);
    expect(made.location).toBe('/wallets/single-key');
    const details = await world.server.running.runtime.services.wallets.reads.details({ userName: 'reader', isAdmin: false }, 'single-key', { limit: 0 });
    expect(details.recv_descriptor).toBe(w.recv_descriptor);
  });
});

describe('the web_active setting', () => {
  let off: TestServer | undefined;
  afterAll(() => off?.dispose());

  it('turns the interface off while the API keeps answering', async () => {
    off = await startTestServer({ env: { SERVICE_WEB_ACTIVE: 'False' } });
    expect((await fetch(`${off.url}/sign-in`)).status).toBe(404);
    expect((await fetch(`${off.url}/`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${off.url}/healthz/live`)).status).toBe(200);
  });
});
