/**
 * A large wallet loads without stopping the process: its stored transactions are parsed, and its lists built,
 * in parts, and other requests are answered in between. A wallet of 30,000 transactions, written as a first
 * sync writes them: while the first read after the write loads them, and again after a restart, health probes
 * sent one after the other keep being answered (a load in one go would hold every probe until its end); and
 * again while the unpaged coin list is formatted.
 */
import { afterEach, expect, it } from 'vitest';
import { toHex } from '../../src/core/bytes.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { serializeTransaction, txid as transactionId, type Transaction } from '../../src/core/tx.js';
import type { Store } from '../../src/store/repositories.js';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { wallets } from './wallet-helpers.js';

const PAYMENTS = 30_000;
const scriptsOf = (descriptor: string) => new DescriptorDeriver(parseDescriptor(descriptor, NETWORKS.regtest)).deriveRange(0, 40).map((d) => d.scriptPubKey);
const receive = scriptsOf(wallets.w_wpkh!.recv_descriptor);
const change = scriptsOf(wallets.w_wpkh!.change_descriptor);

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.dispose();
});

/**
 * One confirmed payment per transaction to receive indexes 0..19, ten per block, written in one change with the
 * addresses the sync would derive for them (the gap after index 19).
 */
async function writePayments(store: Store, alias: string): Promise<number> {
  const wallet = (await store.wallets.findByAlias(alias))!;
  const revision = (await store.wallets.revision(wallet.id))!;
  const known = new Set((await store.wallets.chainRows(wallet.id))!.addresses.map((a) => `${a.branch}/${a.index}`));
  const addressesAdded = [receive, change].flatMap((scripts, branch) =>
    scripts.map((script, index) => ({ walletId: wallet.id, branch: branch as 0 | 1, index, script: toHex(script) })).filter((a) => !known.has(`${a.branch}/${a.index}`)),
  );
  const hashAt = (height: number) => height.toString(16).padStart(64, '0');
  const rows = Array.from({ length: PAYMENTS }, (_, k) => {
    const tx: Transaction = {
      version: 2,
      locktime: 0,
      inputs: [{ txid: (k + 1).toString(16).padStart(64, 'e'), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [new Uint8Array(71), new Uint8Array(33)] }],
      outputs: [{ value: 10_000n + BigInt(k), script: receive[k % 20]! }],
    };
    const height = 1 + Math.floor(k / 10);
    return { walletId: wallet.id, txid: transactionId(tx), hex: toHex(serializeTransaction(tx)), status: 'confirmed' as const, blockHeight: height, blockHash: hashAt(height), blockTime: 1_700_000_000 + height * 600, firstSeen: 1_700_000_000, replaceable: false };
  });
  const tipHeight = 1 + Math.floor((PAYMENTS - 1) / 10);
  const sync = { walletId: wallet.id, tip: { height: tipHeight, hash: hashAt(tipHeight) }, lastUsedReceive: 19, lastUsedChange: -1 };
  await store.transaction((repos) => repos.wallets.applyChange({ walletId: wallet.id, addressesAdded, transactionsAdded: rows, transactionsUpdated: [], transactionsRemoved: [], sync }, revision));
  return PAYMENTS;
}

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
  await writePayments(first.running.runtime.store, 'w_wpkh');
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
