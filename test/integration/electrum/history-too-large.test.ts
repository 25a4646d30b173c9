/**
 * A wallet address paid more times than the Electrum server's `max_history` (a real Fulcrum 2.1.1 with the
 * lowest limit it takes, 1000, and an address paid by 1001 coinbases). Fulcrum does not refuse such a history:
 * it answers the subscription with a null status and `get_history` and `listunspent` with empty lists, while
 * `get_balance` still counts the coins. The service must not take that for an unused address: the wallet's
 * `scan` names `history_too_large` (also on its web page), the other wallets go on, and once the server serves
 * the history (its limit raised, restarted) the wallet follows again and shows what Bitcoin Core shows.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scriptHashOf } from '../../../src/chain/electrum/histories.js';
import { fromHex } from '../../../src/core/bytes.js';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { Chain, Client, fixtureWallets, waitFor } from '../bitcoind/chain-world.js';

const LIMIT = 1000;
const MESSAGE =
  "The Electrum server refuses to send the history of one of this wallet's addresses: it holds more transactions than the server allows (its max_history setting)";

describeWithFulcrum('a wallet address with a history over the Electrum server\'s max_history', () => {
  let chain: Chain;
  let fulcrum: FulcrumServer;
  let server: TestServer;
  let client: Client;
  let config: string;
  let configDir: string;
  let birthday: number;
  let busyScriptHash: string;
  const wallet = fixtureWallets['w_wpkh']!;
  const other = fixtureWallets['w_shwpkh']!;

  const firstAddress = async (descriptor: string): Promise<string> => {
    const { descriptor: checked } = await chain.rpc.call('getdescriptorinfo', [descriptor]);
    return (await chain.rpc.call<string[]>('deriveaddresses', [checked, [0, 0]]))[0]!;
  };

  beforeAll(async () => {
    ensureWebAssets();
    chain = await Chain.start({ args: FULCRUM_NODE_ARGS });
    birthday = await chain.height();
    const busy = await firstAddress(wallet.recv_descriptor);
    busyScriptHash = scriptHashOf(fromHex((await chain.rpc.call<{ scriptPubKey: string }>('getaddressinfo', [busy])).scriptPubKey));
    await chain.rpc.call('generatetoaddress', [LIMIT + 1, busy]);
    await chain.miner.call('sendtoaddress', [await firstAddress(other.recv_descriptor), 1.5]);
    await chain.mine(1);
    configDir = mkdtempSync(join(tmpdir(), 'wcs-fulcrum-conf-'));
    config = join(configDir, 'fulcrum.conf');
    writeFileSync(config, `max_history = ${LIMIT}\n`);
    fulcrum = await startFulcrum(chain.node, { args: [config] });
    server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: fulcrum.url, SERVICE_SYNC_INTERVAL: '0.2', SERVICE_LOG_LEVEL: 'error' } });
    client = await Client.forAdmin(server);
  }, 240_000);

  afterAll(async () => {
    await server?.dispose();
    await fulcrum?.stop();
    await chain?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  it('Fulcrum 2.1.1 answers such a script as unused, but for its balance', async () => {
    expect(await fulcrum.request('blockchain.scripthash.subscribe', [busyScriptHash])).toBeNull();
    expect(await fulcrum.request('blockchain.scripthash.get_history', [busyScriptHash])).toEqual([]);
    expect(await fulcrum.request('blockchain.scripthash.listunspent', [busyScriptHash])).toEqual([]);
    const balance = await fulcrum.request<{ confirmed: number; unconfirmed: number }>('blockchain.scripthash.get_balance', [busyScriptHash]);
    expect(balance.confirmed).toBeGreaterThan(0);
  });

  it('the wallet says the server refuses its history, stays behind, and the other wallet goes on', async () => {
    const tip = await chain.height();
    await client.importWallet('busy', { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday });
    await client.importWallet('quiet', { recv_descriptor: other.recv_descriptor, change_descriptor: other.change_descriptor, birthday });
    const refused = await waitFor(async () => {
      const { scan } = await client.details('busy');
      return scan?.error && scan;
    }, 'the busy wallet to show its refusal');
    expect(Object.keys(refused).sort()).toEqual(['error', 'height', 'progress']);
    expect(refused.error).toEqual({ code: 'history_too_large', message: MESSAGE });
    expect(refused.height).toBeLessThan(tip);
    expect(refused.progress).toBeGreaterThanOrEqual(0);
    expect(refused.progress).toBeLessThan(1);
    const busy = await client.details('busy');
    expect(busy.txlist).toEqual([]);
    expect(busy.balance.total_sat).toBe(0);

    await client.waitForBalance('quiet', { total: 150_000_000 });
    expect((await client.details('quiet')).scan).toBeNull();

    const web = new WebClient(server.url);
    await web.signIn('admin', server.adminPassword);
    const page = (await web.get('/wallets/busy')).text;
    expect(page).toContain('data-scan-error="history_too_large"');
    expect(page).toContain(MESSAGE.replaceAll("'", '&#39;'));
  });

  it('once the server serves the history, the wallet follows again: no error, and Core\'s transactions', async () => {
    writeFileSync(config, `max_history = ${LIMIT * 2}\n`);
    await fulcrum.kill();
    await fulcrum.restart();
    const watcher = await chain.watcher('busy-watch', wallet);
    await watcher.call('rescanblockchain', [birthday]);
    const coreTxids: string[] = (await watcher.call<any[]>('listtransactions', ['*', 5000, 0, true])).map((t) => t.txid).sort();
    expect(coreTxids).toHaveLength(LIMIT + 1);
    const followed = await waitFor(async () => {
      const details = await client.details('busy');
      return details.scan === null && details.txlist.length === LIMIT + 1 && details;
    }, 'the busy wallet to follow again', 120_000);
    expect(followed.txlist.map((t: any) => t.txid).sort()).toEqual(coreTxids);
    expect(followed.balance.total_sat).toBe((await chain.coreBalance(watcher)).total);
  });
});
