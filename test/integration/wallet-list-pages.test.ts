/** The wallet list over HTTP, SQLite and PostgreSQL: pages, the total, bad page values, and who sees which wallet. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNPAGED_WALLET_LIST_MAX } from '../../src/services/wallets/reads.js';
import { basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { writePayments } from './large-wallet.support.js';
import { wallets } from './wallet-helpers.js';

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`GET /wallets on ${database}`, () => {
    let server: TestServer;
    let admin: { authorization: string };
    let bob: { authorization: string };
    const list = (auth: { authorization: string }, query = '') => request(`${server.api}/wallets${query}`, { headers: auth });
    const create = async (auth: { authorization: string }, alias: string, fixture: string, extra: object = {}) => {
      const w = wallets[fixture]!;
      const created = await request(`${server.api}/wallets`, { method: 'POST', headers: auth, json: { name: `Wallet ${alias}`, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0, ...extra } });
      expect(created.status, created.text).toBe(201);
    };

    beforeAll(async () => {
      server = await startTestServer({ database, env: { SERVICE_NETWORK: 'regtest' } });
      admin = { authorization: bearer((await createToken(server, 'admin', server.adminPassword, 'admin')).jwt_token) };
      await server.running.runtime.services.users.addUser('bob', 'bob-password-123', { admin: false });
      bob = { authorization: bearer((await createToken(server, 'bob', 'bob-password-123', 'bob')).jwt_token) };
      // Created in this order: the list is oldest first.
      for (const [alias, fixture] of [['a1', 'w_wpkh'], ['a2', 'w_shwpkh'], ['a3', 'w_pkh'], ['a4', 'w_tr']] as const) await create(admin, alias, fixture);
      await create(bob, 'b1', 'w_wsh2of3', { shared_with: [{ user: 'admin', access: 'read' }] });
      await create(bob, 'b2', 'w_shwsh2of3');
      await writePayments(server.running.runtime.store, 'a2', 3, 'w_shwpkh');
    }, 60_000);
    afterAll(() => server?.dispose());

    it('answers every wallet the caller may read with the total when unpaged, as before', async () => {
      const all = await list(admin);
      expect(all.status, all.text).toBe(200);
      expect(all.body.wallets.map((w: { alias: string }) => w.alias)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
      expect(all.body.total).toBe(5);
      expect(all.body.wallets[1]).toMatchObject({ alias: 'a2', name: 'Wallet a2', sigs_required: 1, sigs_total: 1, balance: { confirmed_sat: 30_003 } });
      const own = await list(bob);
      expect(own.body).toMatchObject({ total: 2, wallets: [{ alias: 'b1' }, { alias: 'b2' }] });
    });

    it('pages in the same order, the total counting every wallet the caller may read', async () => {
      const pages = [];
      for (const offset of [0, 2, 4]) {
        const page = await list(admin, `?limit=2&offset=${offset}`);
        expect(page.status, page.text).toBe(200);
        expect(page.body.total).toBe(5);
        pages.push(...page.body.wallets);
      }
      expect(pages).toEqual((await list(admin)).body.wallets);
      expect((await list(admin, '?limit=2&offset=2')).body.wallets.map((w: { alias: string }) => w.alias)).toEqual(['a3', 'a4']);
      expect((await list(admin, '?offset=4')).body.wallets.map((w: { alias: string }) => w.alias)).toEqual(['b1']);
      expect((await list(admin, '?limit=2&offset=9')).body).toEqual({ wallets: [], total: 5 });
      expect((await list(admin, '?limit=0')).body).toEqual({ wallets: [], total: 5 });
      const second = await list(admin, '?limit=1&offset=1');
      expect(second.body.wallets[0]).toMatchObject({ alias: 'a2', balance: { confirmed_sat: 30_003 } });
      expect((await list(bob, '?limit=1&offset=1')).body).toMatchObject({ total: 2, wallets: [{ alias: 'b2' }] });
    });

    it('counts only the wallets of a token narrowed to some wallets', async () => {
      const narrowed = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', server.adminPassword) }, json: { jwt_token_description: 'two wallets', jwt_token_life: 600, wallets: ['a3', 'b1'] } });
      expect(narrowed.status, narrowed.text).toBe(201);
      const page = await list({ authorization: bearer(narrowed.body.jwt_token) }, '?limit=1');
      expect(page.body).toMatchObject({ total: 2, wallets: [{ alias: 'a3' }] });
    });

    it('answers 400 naming the parameter for a limit or offset that is not plain decimal digits', async () => {
      for (const query of ['limit=-1', 'limit=1e3', 'limit=0x2', 'limit=abc', 'offset=-1', 'offset=1.0', 'offset=%207']) {
        const bad = await list(admin, `?${query}`);
        expect(bad.status, query).toBe(400);
        expect(bad.body).toMatchObject({ code: 'invalid_request', errors: [{ path: `/querystring/${query.split('=')[0]}` }] });
      }
    });

    it('keeps /service listing every reachable wallet by name, whatever the paging', async () => {
      const service = await request(`${server.api}/service`, { headers: admin });
      expect(service.status, service.text).toBe(200);
      expect(service.body.wallets_names).toEqual(['Wallet a1', 'Wallet a2', 'Wallet a3', 'Wallet a4', 'Wallet b1']);
      expect(service.body.wallets_alias).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
      expect(service.body.alias_name).toEqual({ a1: 'Wallet a1', a2: 'Wallet a2', a3: 'Wallet a3', a4: 'Wallet a4', b1: 'Wallet b1' });
      expect(service.body.name_alias).toEqual({ 'Wallet a1': 'a1', 'Wallet a2': 'a2', 'Wallet a3': 'a3', 'Wallet a4': 'a4', 'Wallet b1': 'b1' });
    });

    it(`answers 422 page_required to an unpaged list of more than ${UNPAGED_WALLET_LIST_MAX} wallets; pages still answer`, async () => {
      await server.running.runtime.services.users.addUser('carol', 'carol-password-123', { admin: false });
      const carol = { authorization: bearer((await createToken(server, 'carol', 'carol-password-123', 'carol')).jwt_token) };
      const store = server.running.runtime.store;
      const seed = (await store.wallets.findByAlias('a1'))!;
      for (let i = 0; i <= UNPAGED_WALLET_LIST_MAX; i++) {
        await store.wallets.insert({ ...seed, id: randomUUID(), alias: `c${String(i).padStart(4, '0')}`, name: `Carol ${i}`, ownerName: 'carol', createdAt: seed.createdAt + 1 + i }, []);
      }
      const unpaged = await list(carol);
      expect(unpaged.status, unpaged.text).toBe(422);
      expect(unpaged.body).toMatchObject({ code: 'page_required', errors: [{ path: '/querystring/limit' }] });
      expect(unpaged.body.message).toContain('limit and offset');
      const last = await list(carol, `?limit=5&offset=${UNPAGED_WALLET_LIST_MAX - 1}`);
      expect(last.status, last.text).toBe(200);
      expect(last.body.total).toBe(UNPAGED_WALLET_LIST_MAX + 1);
      expect(last.body.wallets.map((w: { alias: string }) => w.alias)).toEqual([`c0${UNPAGED_WALLET_LIST_MAX - 1}`, `c${UNPAGED_WALLET_LIST_MAX}`]);
      expect((await list(admin)).body.total).toBe(5); // the others' lists are as they were
    }, 120_000);
  });
}
