/** The web wallet list in pages of 50: the count, links to the next and previous pages, only the caller's wallets. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createToken, request, startTestServer, TEST_ADMIN_PASSWORD, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { wallets } from '../wallet-helpers.js';

let server: TestServer;

beforeAll(async () => {
  ensureWebAssets();
  server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_MAX_WALLETS_PER_USER: '100' } });
  await server.running.runtime.services.users.addUser('bob', 'bob-password-123', { admin: false });
  const admin = { authorization: bearer((await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'admin')).jwt_token) };
  const bob = { authorization: bearer((await createToken(server, 'bob', 'bob-password-123', 'bob')).jwt_token) };
  const w = wallets.w_wpkh!;
  const create = async (auth: { authorization: string }, alias: string) => {
    const created = await request(`${server.api}/wallets`, { method: 'POST', headers: auth, json: { name: `Wallet ${alias}`, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 } });
    expect(created.status, created.text).toBe(201);
  };
  for (let i = 0; i < 52; i++) await create(admin, `w${String(i).padStart(2, '0')}`);
  await create(bob, 'bobs');
}, 120_000);
afterAll(() => server?.dispose());

describe('the web wallet list', () => {
  it('shows 50 wallets a page with the count and links between the pages', async () => {
    const client = new WebClient(server.url);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const first = await client.get('/');
    expect(first.status).toBe(200);
    expect(first.text).toContain('52 wallets');
    expect(first.text).toContain('href="/wallets/w49"');
    expect(first.text).not.toContain('href="/wallets/w50"');
    expect(first.text).not.toContain('href="/wallets/bobs"');
    expect(first.text).toContain('Page 1 of 2');
    expect(first.text).toContain('href="/?page=2"');
    expect(first.text).not.toContain('rel="prev"');

    const second = await client.get('/?page=2');
    expect(second.text).toContain('href="/wallets/w50"');
    expect(second.text).toContain('href="/wallets/w51"');
    expect(second.text).not.toContain('href="/wallets/w49"');
    expect(second.text).toContain('href="/?page=1"');
    expect(second.text).not.toContain('rel="next"');

    const past = await client.get('/?page=9');
    expect(past.status).toBe(200);
    expect(past.text).toContain('href="/"');
    expect((await client.get('/?page=x')).text).toContain('href="/wallets/w00"'); // not a page number: the first page
  });

  it('counts only the wallets the user may read, without a pager when one page holds them', async () => {
    const client = new WebClient(server.url);
    await client.signIn('bob', 'bob-password-123');
    const page = await client.get('/');
    expect(page.text).toContain('1 wallet<');
    expect(page.text).toContain('href="/wallets/bobs"');
    expect(page.text).not.toContain('href="/wallets/w00"');
    expect(page.text).not.toContain('class="pager"');
  });
});
