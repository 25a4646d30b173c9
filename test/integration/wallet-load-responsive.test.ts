/**
 * A large wallet loads without stopping the process: its stored transactions are parsed, and its lists built,
 * in parts, and other requests are answered in between. A wallet of 30,000 transactions, written as a first
 * sync writes them: while the first read after the write loads them, and again after a restart, health probes
 * sent one after the other keep being answered (a load in one go would hold every probe until its end); and
 * again while the unpaged coin list is formatted.
 */
import { afterEach, expect, it } from 'vitest';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { writePayments } from './large-wallet.support.js';
import { wallets } from './wallet-helpers.js';

const PAYMENTS = 30_000;

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.dispose();
});

/** Reads `path` of the API while sending health probes one after the other: its answer, and how many probes were answered first. */
async function probesAnsweredDuring(server: TestServer, token: string, path: string): Promise<{ probes: number; body: any }> {
  let done = false;
  const read = request(`${server.api}${path}`, { headers: { authorization: bearer(token) } }).finally(() => (done = true));
  let probes = 0;
  while (!done) {
    const probe = await request(`${server.url}/healthz/live`);
    expect(probe.status).toBe(200);
    if (!done) probes += 1;
  }
  const answer = await read;
  expect(answer.status, answer.text).toBe(200);
  return { probes, body: answer.body };
}

const probesAnsweredDuringFirstRead = async (server: TestServer, token: string) => {
  const { probes, body } = await probesAnsweredDuring(server, token, '/wallets/w_wpkh?limit=1&utxo_limit=1');
  return { probes, coins: body.balance.confirmed_sat };
};

it('answers other requests while a wallet of 30,000 transactions loads, after its first sync and after a restart', async () => {
  const first = await startTestServer({ env: { SERVICE_NETWORK: 'regtest' } });
  servers.push(first);
  const token = (await createToken(first, 'admin', first.adminPassword, 'load')).jwt_token as string;
  const imported = await request(`${first.api}/wallets`, {
    method: 'POST',
    headers: { authorization: bearer(token) },
    json: { name: 'Large', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
  });
  expect(imported.status, imported.text).toBe(201);
  await writePayments(first.running.runtime.store, 'w_wpkh', PAYMENTS);
  const total = Array.from({ length: PAYMENTS }, (_, k) => 10_000 + k).reduce((a, b) => a + b, 0);

  // The rows written since the revision the process holds: every transaction at once.
  const afterSync = await probesAnsweredDuringFirstRead(first, token);
  expect(afterSync.coins).toBe(total);
  expect(afterSync.probes).toBeGreaterThanOrEqual(8);
  await first.stop();

  // A process starting on the stored wallet loads it whole.
  const second = await startTestServer({ dataFolder: first.dataFolder, env: { SERVICE_NETWORK: 'regtest' } });
  servers.push(second);
  const afterRestart = await probesAnsweredDuringFirstRead(second, token);
  expect(afterRestart.coins).toBe(total);
  expect(afterRestart.probes).toBeGreaterThanOrEqual(8);

  // Every coin at once: formatted in parts too.
  const unpaged = await probesAnsweredDuring(second, token, '/wallets/w_wpkh/utxo');
  expect(unpaged.body.utxo).toHaveLength(PAYMENTS);
  expect(unpaged.probes).toBeGreaterThanOrEqual(8);
}, 120_000);
