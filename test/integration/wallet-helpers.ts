/** Shared setup of the wallet tests: a test node on the regtest fixtures, the service pointed at it, a token. */
import { expect } from 'vitest';
import { loadFixture } from '../support/fixtures.js';
import { startRpcTestServer, type RpcTestServer, type RpcTestServerOptions } from '../support/rpc-server.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer, type TestServerOptions } from '../support/server.js';

export const WALLET_IDS = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;
export const wallets = loadFixture('wallets') as Record<string, { recv_descriptor: string; change_descriptor: string; keys: any[]; type: string; sigs_required: number }>;
export const timeline = loadFixture('timeline') as { snapshots: any[] };

/** Exact satoshis from Core's BTC JSON number. */
export const sats = (btc: number): number => Number(BigInt(btc.toFixed(8).replace('.', '')));

export function nodeEnv(node: RpcTestServer): Record<string, string> {
  const credentials = node.credentials;
  return {
    SERVICE_NETWORK: 'regtest',
    SERVICE_BITCOIND_URL: node.url,
    SERVICE_SYNC_INTERVAL: '0',
    ...('user' in credentials ? { SERVICE_BITCOIND_USER: credentials.user, SERVICE_BITCOIND_PASSWORD: credentials.password } : { SERVICE_BITCOIND_COOKIE: credentials.cookieFile }),
  };
}

export interface WalletWorld {
  node: RpcTestServer;
  server: TestServer;
  token: string;
  auth: { authorization: string };
  close(): Promise<void>;
}

export async function startWalletWorld(nodeOptions: RpcTestServerOptions = {}, serverOptions: TestServerOptions = {}): Promise<WalletWorld> {
  const node = await startRpcTestServer({ snapshot: 0, ...nodeOptions });
  const server = await startTestServer({ ...serverOptions, env: { ...nodeEnv(node), ...serverOptions.env } });
  const token = (await createToken(server, 'admin', server.adminPassword, `wallets ${Math.random()}`)).jwt_token as string;
  return {
    node,
    server,
    token,
    auth: { authorization: bearer(token) },
    async close() {
      await server.dispose();
      await node.close();
    },
  };
}

export async function importFixtureWallets(world: { server: TestServer; auth: { authorization: string } }, ids: readonly string[] = WALLET_IDS): Promise<void> {
  for (const id of ids) {
    const response = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: `Fixture ${id}`, alias: id, recv_descriptor: wallets[id]!.recv_descriptor, change_descriptor: wallets[id]!.change_descriptor, birthday: 0 },
    });
    expect(response.status, response.text).toBe(201);
  }
}

/** Compares one wallet's details (over HTTP) with what Bitcoin Core's own wallet reported at the snapshot. */
export function expectWalletMatchesCore(details: any, expected: any, mempoolTxids: Set<string>): void {
  expect({ alias: details.alias, ...pick(details.balance, ['confirmed_sat', 'unconfirmed_sat', 'immature_sat']) }).toEqual({
    alias: details.alias,
    confirmed_sat: sats(expected.balances.trusted),
    unconfirmed_sat: sats(expected.balances.untrusted_pending),
    immature_sat: sats(expected.balances.immature),
  });
  expect(details.balance.confirmed).toBe(expected.balances.trusted);
  const ours = details.utxo.map((u: any) => ({ outpoint: `${u.txid}:${u.vout}`, amount: u.amount_sat, btc: u.amount, confirmations: u.confirmations, address: u.address }));
  const core = expected.unspent.map((u: any) => ({ outpoint: `${u.txid}:${u.vout}`, amount: sats(u.amount), btc: u.amount, confirmations: u.confirmations, address: u.address }));
  const byOutpoint = (a: { outpoint: string }, b: { outpoint: string }) => (a.outpoint < b.outpoint ? -1 : 1);
  expect(ours.sort(byOutpoint)).toEqual(core.sort(byOutpoint));

  const coreByTxid = new Map<string, any[]>();
  for (const entry of expected.transactions) {
    const live = entry.confirmations > 0 || (entry.confirmations === 0 && mempoolTxids.has(entry.txid));
    if (live) coreByTxid.set(entry.txid, [...(coreByTxid.get(entry.txid) ?? []), entry]);
  }
  expect(details.txlist.map((e: any) => e.txid).sort()).toEqual([...coreByTxid.keys()].sort());
  for (const entry of details.txlist) {
    const core = coreByTxid.get(entry.txid)!;
    const fee = core.find((c) => c.fee !== undefined)?.fee as number | undefined;
    const net = core.reduce((sum, c) => sum + sats(c.amount), 0) + (fee === undefined ? 0 : sats(fee));
    expect({ txid: entry.txid, amount_sat: entry.amount_sat, fee: entry.fee, confirmations: entry.confirmations, blockheight: entry.blockheight, blockhash: entry.blockhash }).toEqual({
      txid: entry.txid,
      amount_sat: net,
      fee: fee === undefined ? null : -fee,
      confirmations: core[0].confirmations,
      blockheight: core[0].blockheight ?? null,
      blockhash: core[0].blockhash ?? null,
    });
    expect(core.map((c) => c.address)).toContain(entry.address);
  }
}

function pick(object: any, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, object[k]]));
}

export async function walletDetails(world: { server: TestServer; auth: { authorization: string } }, alias: string): Promise<any> {
  const response = await request(`${world.server.api}/wallets/${alias}`, { headers: world.auth });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/**
 * On a started `wcs serve` (its API base `api`): a token of the test admin, then the fixture wallet
 * w_wpkh imported with it (birthday 0). Returns the token's Authorization value.
 */
export async function adminImportsWpkh(api: string, tokenDescription: string, walletName: string): Promise<string> {
  const tokenAnswer = await fetch(`${api}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD), 'content-type': 'application/json' },
    body: JSON.stringify({ jwt_token_description: tokenDescription, jwt_token_life: '1 days' }),
  });
  const auth = bearer(((await tokenAnswer.json()) as { jwt_token: string }).jwt_token);
  const imported = await fetch(`${api}/wallets`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: walletName, alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 }),
  });
  expect(imported.status).toBe(201);
  return auth;
}
