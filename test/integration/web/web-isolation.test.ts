/**
 * The web interface keeps each visitor to their own session and to what the service stands behind, over
 * HTTP with raw requests: the receive box shows only addresses no one else is handed out and the sync
 * watches, sign-in follows only paths of this service (never a 500), a request carrying two session
 * cookies runs as no one, and notices come from a fixed set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, TEST_ADMIN_PASSWORD } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from '../wallet-helpers.js';

const PAID_SNAPSHOT = 4; // w_wpkh has been paid at receive index 0, 1, 3, 19 and 30

let world: WalletWorld;
let base: string;

const receiveAddress = async (index: number): Promise<string> => {
  const response = await request(`${world.server.api}/wallets/shop/addresses?branch=receive&from=${index}&count=1`, { headers: world.auth });
  expect(response.status, response.text).toBe(200);
  return response.body.addresses[0].address;
};
const shownAddress = (text: string) => /data-receive-address>([^<]+)</.exec(text)?.[1];

async function signedIn(user: string, password: string): Promise<WebClient> {
  const client = new WebClient(base);
  expect((await client.signIn(user, password)).status).toBe(303);
  return client;
}

function expectSecurityHeaders(headers: Headers): void {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
}

beforeAll(async () => {
  ensureWebAssets();
  world = await startWalletWorld({ snapshot: PAID_SNAPSHOT });
  base = world.server.url;
  await world.server.running.runtime.services.users.addUser('mallory', 'mallory-password-1', { admin: false });
  const w = wallets.w_wpkh!;
  const created = await request(`${world.server.api}/wallets`, {
    method: 'POST',
    headers: world.auth,
    json: { name: 'Shop', alias: 'shop', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
  });
  expect(created.status, created.text).toBe(201);
  await world.server.running.runtime.services.sync.runOnce();
}, 60_000);
afterAll(() => world?.close());

describe('the receive box', () => {
  it('shows as the receive address only one the service watches and hands out to no one else', async () => {
    const admin = await signedIn('admin', TEST_ADMIN_PASSWORD);
    // Paid up to 30: the page shows 31, the address `addresses/next` never hands out.
    const page = await admin.get('/wallets/shop');
    expect(page.status).toBe(200);
    expect(shownAddress(page.text)).toBe(await receiveAddress(31));
    expect(page.text).toContain('/0/31</code>');

    // Far past anything watched, past anything handed out, and used: the page says so and shows 31.
    for (const [asked, notice] of [
      ['999999999', 'was not handed out by this wallet'],
      ['40', 'was not handed out by this wallet'],
      ['9999999999', 'was not handed out by this wallet'],
      ['-1', 'was not handed out by this wallet'],
      ['3', 'has already received a payment'],
    ] as const) {
      const refused = await admin.get(`/wallets/shop?receive=${asked}`);
      expect(refused.status).toBe(200);
      expect(refused.text).toContain(notice);
      expect(shownAddress(refused.text)).toBe(await receiveAddress(31));
      expect(refused.text).not.toContain(`Receive address #${asked};`);
    }
    expect((await admin.get('/wallets/shop?receive=999999999')).text).not.toContain(await receiveAddress(999_999_999));

    // "Another new address" hands out 32 and shows it; the API hands out 33 next, and the page still shows 31.
    const another = await admin.post('/wallets/shop/receive/next', {});
    expect(another.status).toBe(303);
    expect(another.location).toBe('/wallets/shop?receive=32');
    const revealed = await admin.get(another.location!);
    expect(shownAddress(revealed.text)).toBe(await receiveAddress(32));
    expect(revealed.text).not.toContain('flash');
    const next = await request(`${world.server.api}/wallets/shop/addresses/next`, { method: 'POST', headers: world.auth });
    expect(next.body).toEqual({ address: await receiveAddress(33), index: 33 });
    expect(shownAddress((await admin.get('/wallets/shop')).text)).toBe(await receiveAddress(31));
    // An unused address below the last used one is watched and handed out to no one: shown as asked.
    expect(shownAddress((await admin.get('/wallets/shop?receive=2')).text)).toBe(await receiveAddress(2));
  });

  it('refuses an out-of-range address also when sign-in leads to it', async () => {
    const client = new WebClient(base);
    const ok = await client.post('/sign-in', { user: 'admin', password: TEST_ADMIN_PASSWORD, next: '/wallets/shop?receive=999999999' }, { csrf: null });
    expect(ok.location).toBe('/wallets/shop?receive=999999999');
    const page = await client.get(ok.location!);
    expect(page.text).toContain('was not handed out by this wallet');
    expect(shownAddress(page.text)).toBe(await receiveAddress(31));
  });
});

describe('where sign-in leads', () => {
  const refused = ['/%09/evil/', '/\t/evil/', '/\n/evil', '/%0A', '/%0d%0aSet-Cookie:x=1', '/\\evil', '/%5Cevil', '//evil', '/%2F%2Fevil', '/%2fevil', 'https://evil', '/ x', '/%20x', '/\u2028/evil', '/\u00a0', '/%E0%A4%A', 'evil', ''];
  const accepted: Array<[string, string]> = [
    ['/wallets/shop?view=coins', '/wallets/shop?view=coins'],
    ['/€', '/%E2%82%AC'],
    ['/wallets/caf\u00e9', '/wallets/caf%C3%A9'],
    ['/wallets/caf%C3%A9', '/wallets/caf%C3%A9'],
  ];

  it('follows only a path of this service, percent-encoding what is past ASCII, and never answers 500', async () => {
    const client = new WebClient(base);
    for (const next of refused) {
      const answer = await client.post('/sign-in', { user: 'admin', password: TEST_ADMIN_PASSWORD, next }, { csrf: null });
      expect({ next, status: answer.status, location: answer.location }).toEqual({ next, status: 303, location: '/' });
    }
    for (const [next, location] of accepted) {
      const answer = await client.post('/sign-in', { user: 'admin', password: TEST_ADMIN_PASSWORD, next }, { csrf: null });
      expect({ next, status: answer.status, location: answer.location }).toEqual({ next, status: 303, location });
    }
    // Signed in already, the sign-in page sends on at once: the same rule.
    for (const next of refused) {
      const answer = await client.get(`/sign-in?next=${encodeURIComponent(next)}`);
      expect({ next, status: answer.status, location: answer.location }).toEqual({ next, status: 303, location: '/' });
    }
    const raw = await client.get('/sign-in?next=/%09/evil/');
    expect(raw.location).toBe('/');
    for (const [next, location] of accepted) expect((await client.get(`/sign-in?next=${encodeURIComponent(next)}`)).location).toBe(location);
    // Not signed in: the form carries only a path it would follow.
    const form = await new WebClient(base).get('/sign-in?next=%0A');
    expect(form.status).toBe(200);
    expect(form.text).toContain('name="next" value="/"');
  });

  it('goes back after a small action only to a page of the same wallet', async () => {
    const admin = await signedIn('admin', TEST_ADMIN_PASSWORD);
    const address = await receiveAddress(2);
    for (const back of ['/wallets/shop\n', '/wallets/shop/%0a', '/wallets/shop//evil', '/wallets/shop\\evil']) {
      const answer = await admin.post('/wallets/shop/labels', { address, label: 'x', back });
      expect({ back, status: answer.status, location: answer.location }).toEqual({ back, status: 303, location: '/wallets/shop' });
    }
    const kept = await admin.post('/wallets/shop/labels', { address, label: 'x', back: '/wallets/shop?view=addresses' });
    expect(kept.location).toBe('/wallets/shop?view=addresses');
  });

  it('answers error pages with the security headers', async () => {
    const admin = await signedIn('admin', TEST_ADMIN_PASSWORD);
    const answers = [
      await admin.get('/wallets/no-such-wallet'),
      await admin.get('/wallets/%E0%A4%A'),
      await admin.get('/sign-in?next=/%0A'),
      await admin.post('/admin/users', { name: '', password: '' }),
      await new WebClient(base).get('/wallets/shop'),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 400, 303, 400, 303]);
    for (const answer of answers) expectSecurityHeaders(answer.headers);
  });
});

describe('two session cookies', () => {
  const CLEARED_PATHS: Record<string, string[]> = { '/': ['/'], '/wallets/shop': ['/', '/wallets', '/wallets/', '/wallets/shop'], '/account': ['/', '/account'] };
  const sessionOf = (client: WebClient) => client.cookie!.split('=')[1]!;

  it('a request carrying two session cookies runs as neither, and has both cleared', async () => {
    const victim = await signedIn('admin', TEST_ADMIN_PASSWORD);
    const attacker = await signedIn('mallory', 'mallory-password-1');
    for (const cookie of [
      `wcs_session=${sessionOf(attacker)}; wcs_session=${sessionOf(victim)}`,
      `wcs_session=${sessionOf(victim)}; wcs_session=${sessionOf(attacker)}`,
      `wcs_session=${sessionOf(victim)}; other=1; wcs_session=${sessionOf(victim)}`,
      `wcs_session=${sessionOf(attacker)};wcs_session=${sessionOf(victim)}`,
    ]) {
      for (const path of ['/', '/wallets/shop', '/account']) {
        const answer = await fetch(`${base}${path}`, { headers: { cookie }, redirect: 'manual' });
        expect({ cookie, path, status: answer.status, location: answer.headers.get('location') }).toEqual({ cookie, path, status: 303, location: `/sign-in?next=${encodeURIComponent(path)}` });
        const cleared = answer.headers.getSetCookie().filter((line) => line.startsWith('wcs_session=;'));
        const paths = cleared.map((line) => /Path=([^;]*)/i.exec(line)?.[1]);
        // Cleared for every path a cookie sent here may have been set for.
        expect(paths).toEqual(expect.arrayContaining(CLEARED_PATHS[path]!));
      }
      // Neither session acts: a post with the victim's form token is not performed.
      const token = await victim.formToken();
      const post = await fetch(`${base}/wallets/shop/receive/next`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: `_csrf=${encodeURIComponent(token)}`,
        redirect: 'manual',
      });
      expect(post.status).toBe(303);
      expect(post.headers.get('location')).toBe('/sign-in?next=%2F');
    }
    // Each cookie alone is still its own session.
    expect((await victim.get('/wallets/shop')).status).toBe(200);
    expect((await attacker.get('/wallets/shop')).status).toBe(404);
    const live = await fetch(`${base}/wallets/shop/live`, { headers: { cookie: `wcs_session=${sessionOf(attacker)}; wcs_session=${sessionOf(victim)}` } });
    expect(live.status).toBe(401);
  });
});

describe('notices', () => {
  it('shows only notices of a fixed set, whatever text a link carries', async () => {
    const admin = await signedIn('admin', TEST_ADMIN_PASSWORD);
    const forged = await admin.get(`/admin?done=${encodeURIComponent('Your session expired: sign in again at evil.example')}`);
    expect(forged.status).toBe(200);
    expect(forged.text).not.toContain('evil.example');
    expect(forged.text).not.toContain('flash notice');
    expect((await admin.get('/admin?done=toString')).text).not.toContain('flash notice');
    const added = await admin.post('/admin/users', { name: 'newcomer', password: 'newcomer-password-1' });
    expect(added.location).toBe('/admin?done=user_added');
    expect((await admin.get(added.location!)).text).toContain('<p class="flash notice" role="status">The user was added.</p>');
    const deleted = await admin.post('/admin/users/newcomer/delete', { wallets: 'refuse' });
    expect(deleted.location).toBe('/admin?done=user_deleted');
  });
});
