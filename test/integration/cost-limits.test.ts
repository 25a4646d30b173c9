/**
 * What one user may cost the service: requests at once (fairness between users), wallets, gap limits,
 * address pages, and how long a request may take to arrive. Each limit answers with its own status and code and
 * changes nothing.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers, type RawAnswer } from '../support/raw-http.js';
import { wallets } from './wallet-helpers.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

type WalletId = 'w_wpkh' | 'w_shwpkh' | 'w_pkh' | 'w_tr';
const walletBody = (id: WalletId, extra: Record<string, unknown> = {}) => ({
  name: `Limits ${id}`,
  alias: id.replace('_', '-'),
  recv_descriptor: wallets[id]!.recv_descriptor,
  change_descriptor: wallets[id]!.change_descriptor,
  birthday: 0,
  ...extra,
});

let server: TestServer;
let admin: string;
let bob: string;
beforeAll(async () => {
  server = await startTestServer({
    env: { SERVICE_NETWORK: 'regtest', SERVICE_MAX_WALLETS_PER_USER: '2', SERVICE_MAX_GAP_LIMIT: '50', SERVICE_ADDRESS_PAGE_MAX: '30' },
  });
  await server.running.runtime.services.users.addUser('bob', 'bob-password-123', { admin: false });
  admin = bearer((await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'limits')).jwt_token);
  bob = bearer((await createToken(server, 'bob', 'bob-password-123', 'limits')).jwt_token);
});
afterAll(() => server.dispose());

const createWallet = (auth: string, body: unknown) => request(`${server.api}/wallets`, { method: 'POST', headers: { authorization: auth }, json: body });

describe('wallets per user and gap limit', () => {
  it('refuses a gap limit over max_gap_limit with 422 gap_limit_too_high, and takes one at it', async () => {
    const high = await createWallet(admin, walletBody('w_wpkh', { gap_limit: 51 }));
    expect(high.status).toBe(422);
    expect(high.body).toEqual({
      message: 'gap_limit must be at most 50 on this service',
      code: 'gap_limit_too_high',
      errors: [{ path: '/gap_limit', message: 'must be at most 50 on this service' }],
    });
    expect((await request(`${server.api}/wallets`, { headers: { authorization: admin } })).body.wallets).toEqual([]);
    const atMax = await createWallet(admin, walletBody('w_wpkh', { gap_limit: 50, shared_with: [{ user: 'bob', access: 'read' }] }));
    expect(atMax.status, atMax.text).toBe(201);
    // Raising it later obeys the same limit.
    const patch = (gapLimit: number) => request(`${server.api}/wallets/w-wpkh`, { method: 'PATCH', headers: { authorization: admin }, json: { gap_limit: gapLimit } });
    const raised = await patch(51);
    expect(raised.status).toBe(422);
    expect(raised.body.code).toBe('gap_limit_too_high');
    expect((await patch(30)).body).toMatchObject({ alias: 'w-wpkh' });
    expect((await request(`${server.api}/wallets/w-wpkh/addresses?from=0&count=1`, { headers: { authorization: admin } })).status).toBe(200);
  });

  it('refuses a wallet past max_wallets_per_user with 422 too_many_wallets; wallets shared with the user do not count', async () => {
    expect((await createWallet(admin, walletBody('w_shwpkh'))).status).toBe(201);
    const third = await createWallet(admin, walletBody('w_pkh'));
    expect(third.status).toBe(422);
    expect(third.body).toEqual({ message: 'A user may own at most 2 wallets on this service; delete one to create another', code: 'too_many_wallets' });
    expect((await request(`${server.api}/wallets/w-pkh`, { headers: { authorization: admin } })).status).toBe(404);
    // bob reads one of admin's wallets and still owns none: two of his own are fine.
    expect((await createWallet(bob, walletBody('w_pkh'))).status).toBe(201);
    expect((await createWallet(bob, walletBody('w_tr'))).status).toBe(201);
    expect((await createWallet(bob, { ...walletBody('w_tr'), alias: 'w-tr-2' })).body.code).toBe('too_many_wallets');
    // Deleting one makes room again.
    expect((await request(`${server.api}/wallets/w-tr`, { method: 'DELETE', headers: { authorization: bob } })).status).toBe(200);
    expect((await createWallet(bob, { ...walletBody('w_tr'), alias: 'w-tr-2' })).status).toBe(201);
  });

  it('caps an address page at address_page_max (400 naming count)', async () => {
    const over = await request(`${server.api}/wallets/w-wpkh/addresses?count=31`, { headers: { authorization: admin } });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([{ path: '/querystring/count', message: expect.stringContaining('30') }]);
    const page = await request(`${server.api}/wallets/w-wpkh/addresses?count=30&from=2147483600`, { headers: { authorization: admin } });
    expect(page.status, page.text).toBe(200);
    expect(page.body.addresses).toHaveLength(30);
  });
});

describe('the limits in the service details', () => {
  it('shows every limit in config.limits', async () => {
    const details = await request(`${server.api}/service`, { headers: { authorization: admin } });
    expect(details.body.config.limits).toEqual({
      user_requests_in_flight: 4,
      user_request_queue: 64,
      user_request_queue_timeout: 10,
      user_event_streams: 8,
      user_request_rate: 0,
      user_request_burst: 20,
      max_wallets_per_user: 2,
      max_gap_limit: 50,
      address_page_max: 30,
      request_timeout: 30,
    });
  });
});

describe('requests per user: fairness instead of refusals', () => {
  const listWallets = (target: TestServer, auth: string) => request(`${target.api}/wallets`, { headers: { authorization: auth } });

  it('never refuses a client that sends one request at a time, however fast (default limits)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) statuses.push((await listWallets(server, bob)).status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('lets one user send 50 requests at once, all answered, while another user\'s one-at-a-time requests are served', async () => {
    const hammering = Promise.all(Array.from({ length: 50 }, () => listWallets(server, admin).then((r) => r.status)));
    const sequential: number[] = [];
    for (let i = 0; i < 30; i++) sequential.push((await listWallets(server, bob)).status);
    expect(sequential.filter((status) => status !== 200)).toEqual([]);
    expect((await hammering).filter((status) => status !== 200)).toEqual([]);
  });

  it('answers 429 too_many_requests with Retry-After only past the line, and frees slots and places of clients that leave', async () => {
    const gated = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_USER_REQUESTS_IN_FLIGHT: '1', SERVICE_USER_REQUEST_QUEUE: '2' } });
    try {
      const auth = bearer((await createToken(gated, 'admin', TEST_ADMIN_PASSWORD, 'gate')).jwt_token);
      // Bodies that never finish: each request holds its slot (or its place in line) until its client leaves.
      const held = Array.from({ length: 10 }, () => unfinishedPost(gated, auth));
      const answered = await firstAnswers(held, 7);
      expect(answered.map((a) => a.status)).toEqual(Array(7).fill(429));
      for (const answer of answered) {
        expect(answer.headers['retry-after']).toBe('1');
        expect(JSON.parse(answer.body)).toEqual({ message: 'Too many requests at once; wait for an answer before sending more', code: 'too_many_requests' });
      }
      // One in flight and two in line are left; a further request is refused too, and created nothing.
      const refused = await request(`${gated.api}/wallets`, { method: 'POST', headers: { authorization: auth }, json: walletBody('w_wpkh') });
      expect(refused.status).toBe(429);
      for (const h of held) h.leave();
      const after = await listWallets(gated, auth);
      expect(after.status).toBe(200);
      expect(after.body.wallets).toEqual([]);
    } finally {
      await gated.dispose();
    }
  });

  it('answers 429 to a request that waited in line longer than user_request_queue_timeout', async () => {
    const gated = await startTestServer({ env: { SERVICE_USER_REQUESTS_IN_FLIGHT: '1', SERVICE_USER_REQUEST_QUEUE: '5', SERVICE_USER_REQUEST_QUEUE_TIMEOUT: '1' } });
    try {
      const auth = bearer((await createToken(gated, 'admin', TEST_ADMIN_PASSWORD, 'gate')).jwt_token);
      const held = [unfinishedPost(gated, auth), unfinishedPost(gated, auth)];
      const [waited] = await firstAnswers(held, 1);
      expect(waited!.status).toBe(429);
      expect(waited!.headers['retry-after']).toBe('1');
      for (const h of held) h.leave();
      expect((await listWallets(gated, auth)).status).toBe(200);
    } finally {
      await gated.dispose();
    }
  });

  it('keeps user_request_rate as an optional hard cap: 429 with Retry-After past the burst, to that user only', async () => {
    const limited = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_USER_REQUEST_RATE: '1', SERVICE_USER_REQUEST_BURST: '5' } });
    try {
      await limited.running.runtime.services.users.addUser('reader', 'reader-password-1', { admin: false });
      const reader = bearer((await createToken(limited, 'reader', 'reader-password-1', 'r')).jwt_token);
      const other = bearer((await createToken(limited, 'admin', TEST_ADMIN_PASSWORD, 'o')).jwt_token);
      // The token creation above took one of reader's five.
      const statuses = await Promise.all(Array.from({ length: 8 }, () => listWallets(limited, reader)));
      expect(statuses.filter((r) => r.status === 200)).toHaveLength(4);
      const refused = statuses.filter((r) => r.status === 429);
      expect(refused).toHaveLength(4);
      expect(refused[0]!.body).toEqual({ message: 'Too many requests; slow down', code: 'too_many_requests' });
      expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another user is not slowed by it.
      expect((await listWallets(limited, other)).status).toBe(200);
      // A refused POST creates nothing.
      const post = await request(`${limited.api}/wallets`, { method: 'POST', headers: { authorization: reader }, json: walletBody('w_wpkh') });
      expect(post.status).toBe(429);
      expect((await listWallets(limited, other)).body.wallets).toEqual([]);
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await listWallets(limited, reader)).status).toBe(200);
    } finally {
      await limited.dispose();
    }
  });
});

interface HeldRequest {
  /** The answer, once one came; undefined while none. */
  answer: Promise<RawAnswer | undefined>;
  /** The client leaves: the connection is closed. */
  leave(): void;
}

/** A POST whose body never finishes arriving. */
function unfinishedPost(target: TestServer, authorization: string): HeldRequest {
  const socket = connect(Number(new URL(target.url).port), '127.0.0.1');
  let received = '';
  const answer = new Promise<RawAnswer | undefined>((resolve) => {
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
      try {
        const [first] = parseAnswers(received);
        if (first) resolve(first);
      } catch {
        // not all of it yet
      }
    });
    socket.on('close', () => resolve(undefined));
    socket.on('error', () => resolve(undefined));
  });
  socket.write(`POST /api/v1alpha/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
  return { answer, leave: () => void socket.destroy() };
}

/** Waits until `count` of the held requests were answered; those answers. */
async function firstAnswers(held: HeldRequest[], count: number): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  await new Promise<void>((resolve) => {
    for (const h of held) {
      void h.answer.then((a) => {
        if (a) answers.push(a);
        if (answers.length === count) resolve();
      });
    }
  });
  return answers;
}

describe('a request body that arrives slowly', () => {
  // Fastify's server, and the early listener's server it takes over: the timeout is set on either.
  it.each([false, true])('is cut after request_timeout with 408 and the connection closed (early listener: %s)', async (earlyListener) => {
    const slow = await startTestServer({ env: { SERVICE_REQUEST_TIMEOUT: '1' }, earlyListener });
    try {
      const { port } = new URL(slow.url);
      const started = Date.now();
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(`POST /api/v1alpha/token HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth('admin', TEST_ADMIN_PASSWORD)}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
        // One byte every 300 ms: never enough to finish the body in time.
        const drip = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(drip)), 300);
        socket.on('close', () => clearInterval(drip));
        setTimeout(() => socket.destroy(new Error('still open after 10 s')), 10_000).unref();
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('{"message":"Request timeout","code":"request_timeout"}');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await slow.dispose();
    }
  });
});
