/**
 * Shared setup of the tests against a real Bitcoin Core: one regtest node per test file with a
 * funded miner wallet, the real service following it over JSON-RPC, and helpers that act as the
 * service's users (over HTTP) and as the wallets' cosigners (Bitcoin Core signer wallets).
 */
import { describe, expect } from 'vitest';
import { startBitcoind, type BitcoindNode, type StartBitcoindOptions } from '../../support/bitcoind.js';
import { locateBitcoind, realNodeRequired } from '../../support/bitcoind-locate.js';
import type { WalletRpc } from '../../support/bitcoind-rpc.js';
import { loadFixture } from '../../support/fixtures.js';
import { bearer, createToken, request, startTestServer, type JsonResponse, type TestServer, type TestServerOptions } from '../../support/server.js';

export interface FixtureKey {
  key: string;
  fingerprint: string;
  derivation: string;
  tpub: string;
  tprv: string;
}
export interface FixtureWallet {
  type: string;
  sigs_required: number;
  keys: FixtureKey[];
  recv_descriptor: string;
  change_descriptor: string;
}

export const WALLET_IDS = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3', 'w_shwsh2of3', 'w_wsh2of2'] as const;
export const fixtureWallets = loadFixture('wallets') as Record<string, FixtureWallet>;

/**
 * `describe` for the real-node tests: skipped (the run's global setup says so loudly) only when no
 * bitcoind is found and the run is not CI; under CI a missing node fails.
 */
export function describeWithBitcoind(name: string, body: () => void): void {
  const located = locateBitcoind();
  if (!located.ok && realNodeRequired()) throw new Error(`CI run without a usable bitcoind: ${located.reason}`);
  describe.runIf(located.ok)(name, body);
}

/** Exact satoshis from Core's BTC JSON number. */
export const sats = (btc: number): number => Math.round(Number(btc.toFixed(8)) * 1e8);
/** A BTC JSON number for Core from satoshis. */
export const btc = (sat: number): number => Number((sat / 1e8).toFixed(8));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until it returns a truthy value; fails naming `what` (and the last value seen) after `timeoutMs`. */
export async function waitFor<T>(condition: () => Promise<T | undefined | false | null>, what: string, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    }
    await sleep(100);
  }
}

/** Environment that points the service at the node (cookie authentication) with a fast sync. */
export function serviceEnv(node: BitcoindNode, syncInterval = '0.2'): Record<string, string> {
  return {
    SERVICE_NETWORK: 'regtest',
    SERVICE_BITCOIND_URL: node.url,
    SERVICE_BITCOIND_COOKIE: node.cookieFile,
    SERVICE_SYNC_INTERVAL: syncInterval,
  };
}

/** Blocks mined at start: the coinbases of the first ~45 are spendable with a margin for reorgs. */
const INITIAL_BLOCKS = 150;
/** Funding spends only coins this deep: a reorg of a few blocks never makes them immature coinbases again. */
const FUNDING_MIN_CONF = 105;

export class Chain {
  readonly miner: WalletRpc;
  private minerAddress = '';

  constructor(readonly node: BitcoindNode) {
    this.miner = node.rpc.wallet('miner');
  }

  static async start(options: StartBitcoindOptions = {}): Promise<Chain> {
    const node = await startBitcoind(options);
    const chain = new Chain(node);
    try {
      await node.rpc.call('createwallet', { wallet_name: 'miner', load_on_startup: false });
      chain.minerAddress = await chain.miner.call('getnewaddress', ['', 'bech32']);
      await chain.mine(INITIAL_BLOCKS);
    } catch (error) {
      await node.stop();
      throw error;
    }
    return chain;
  }

  get rpc() {
    return this.node.rpc;
  }

  async height(): Promise<number> {
    return this.rpc.call('getblockcount');
  }

  /**
   * Mines `n` blocks to the miner (or to `address`: after `invalidateblock`, a block mined to the same address in
   * the same second is the invalidated one again, which the node refuses); waits until the filter index has them.
   * Returns the block hashes.
   */
  async mine(n = 1, address = this.minerAddress): Promise<string[]> {
    const hashes: string[] = await this.rpc.call('generatetoaddress', [n, address]);
    await this.filtersAt(await this.height());
    return hashes;
  }

  /** Mines one block holding no transaction (the mempool stays as it is); returns its hash. */
  async mineEmpty(): Promise<string> {
    const { hash } = await this.rpc.call('generateblock', [this.minerAddress, []]);
    await this.filtersAt(await this.height());
    return hash;
  }

  private async filtersAt(height: number): Promise<void> {
    await waitFor(async () => {
      const info = await this.rpc.call('getindexinfo', ['basic block filter index']);
      const index = info['basic block filter index'];
      return index?.synced === true && index.best_block_height === height;
    }, `the block filter index at height ${height}`);
  }

  /** Pays each address its amount in one miner transaction (not yet mined); returns its txid. */
  async pay(payments: Array<{ address: string; sat: number }>): Promise<string> {
    const amounts: Record<string, number> = {};
    for (const p of payments) {
      if (amounts[p.address] !== undefined) throw new Error(`pay: ${p.address} twice in one transaction`);
      amounts[p.address] = btc(p.sat);
    }
    return this.miner.call('sendmany', { dummy: '', amounts, minconf: FUNDING_MIN_CONF });
  }

  /** A fresh miner address of the given type (bech32, bech32m, p2sh-segwit, legacy). */
  async minerAddressOf(type: 'bech32' | 'bech32m' | 'p2sh-segwit' | 'legacy'): Promise<string> {
    return this.miner.call('getnewaddress', ['', type]);
  }

  async inMempool(txid: string): Promise<boolean> {
    return (await this.rpc.call<string[]>('getrawmempool')).includes(txid);
  }

  /** Creates a blank Core wallet (`watchOnly`: without private keys) holding these descriptors. */
  async coreWallet(name: string, descriptors: string[], watchOnly: boolean): Promise<WalletRpc> {
    await this.rpc.call('createwallet', { wallet_name: name, disable_private_keys: watchOnly, blank: true, load_on_startup: false });
    const wallet = this.rpc.wallet(name);
    const requests = [];
    for (const descriptor of descriptors) {
      const { checksum } = await this.rpc.call('getdescriptorinfo', [stripChecksum(descriptor)]);
      requests.push({ desc: `${stripChecksum(descriptor)}#${checksum}`, timestamp: 'now', range: [0, 200] });
    }
    const results: Array<{ success: boolean; error?: { message: string } }> = await wallet.call('importdescriptors', [requests]);
    for (const r of results) if (!r.success) throw new Error(`importdescriptors into ${name}: ${r.error?.message}`);
    return wallet;
  }

  /** Core's watch-only view of a wallet: the same receive and change descriptors, no private key. */
  watcher(name: string, wallet: { recv_descriptor: string; change_descriptor: string }): Promise<WalletRpc> {
    return this.coreWallet(`watch-${name}`, [wallet.recv_descriptor, wallet.change_descriptor], true);
  }

  /** A cosigner: the wallet's descriptors with this key's tprv in place of its tpub (the other keys stay public). */
  signer(name: string, wallet: { recv_descriptor: string; change_descriptor: string }, key: { tpub: string; tprv: string }): Promise<WalletRpc> {
    const withPrivate = [wallet.recv_descriptor, wallet.change_descriptor].map((d) => {
      if (!d.includes(key.tpub)) throw new Error(`signer ${name}: the descriptor does not hold ${key.tpub}`);
      return stripChecksum(d).replaceAll(key.tpub, key.tprv);
    });
    return this.coreWallet(`sign-${name}`, withPrivate, false);
  }

  /** Core's balance of a watch-only wallet, in satoshis. */
  async coreBalance(watcher: WalletRpc): Promise<{ confirmed: number; unconfirmed: number; immature: number; total: number }> {
    const { mine } = await watcher.call('getbalances');
    const confirmed = sats(mine.trusted);
    const unconfirmed = sats(mine.untrusted_pending);
    const immature = sats(mine.immature);
    return { confirmed, unconfirmed, immature, total: confirmed + unconfirmed + immature };
  }

  async stop(): Promise<void> {
    await this.node.stop();
  }
}

export function stripChecksum(descriptor: string): string {
  const hash = descriptor.indexOf('#');
  return hash === -1 ? descriptor : descriptor.slice(0, hash);
}

/** Signs a PSBT as one cosigner with Core (`walletprocesspsbt`, sign, no finalizing); returns the signed copy. */
export async function cosign(signer: WalletRpc, base64: string): Promise<string> {
  const result = await signer.call('walletprocesspsbt', { psbt: base64, sign: true, finalize: false });
  if (result.psbt === base64) throw new Error(`${signer.name} added nothing to the PSBT`);
  return result.psbt;
}

/** One user of the service: requests with its bearer token against one instance's API. */
export class Client {
  constructor(
    public api: string,
    readonly token: string,
  ) {}

  static async forAdmin(server: TestServer): Promise<Client> {
    const token = (await createToken(server, 'admin', server.adminPassword, `real node ${Math.random()}`)).jwt_token as string;
    return new Client(server.api, token);
  }

  /** The same token against another instance. */
  on(api: string): Client {
    return new Client(api, this.token);
  }

  send(method: string, path: string, json?: unknown): Promise<JsonResponse> {
    return request(`${this.api}${path}`, { method, headers: { authorization: bearer(this.token) }, ...(json !== undefined ? { json } : {}) });
  }

  async ok(method: string, path: string, json?: unknown, status = 200): Promise<any> {
    const response = await this.send(method, path, json);
    expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
    return response.body;
  }

  /** Imports a wallet watch-only from its descriptors; the birthday defaults to the current tip. */
  async importWallet(alias: string, body: Record<string, unknown>): Promise<any> {
    return this.ok('POST', '/wallets', { name: `Real node ${alias}`, alias, ...body }, 201);
  }

  details(alias: string): Promise<any> {
    return this.ok('GET', `/wallets/${alias}`);
  }

  async nextAddress(alias: string): Promise<string> {
    return (await this.ok('POST', `/wallets/${alias}/addresses/next`)).address;
  }

  /** Pending PSBTs keyed by txid. */
  async psbts(alias: string): Promise<Record<string, any>> {
    return (await this.ok('GET', `/wallets/${alias}/psbt`)).result;
  }

  async createPsbt(alias: string, body: Record<string, unknown>): Promise<any> {
    return (await this.ok('POST', `/wallets/${alias}/psbt`, body, 201)).result;
  }

  async psbtRecord(alias: string, txid: string): Promise<any> {
    return (await this.ok('GET', `/wallets/${alias}/psbt/${txid}`)).result;
  }

  async psbtBase64(alias: string, txid: string): Promise<string> {
    const response = await this.send('GET', `/wallets/${alias}/psbt/${txid}?format=base64`);
    expect(response.status, `download of PSBT ${txid}: ${response.text}`).toBe(200);
    return response.text;
  }

  putPsbt(alias: string, txid: string, base64: string): Promise<JsonResponse> {
    return this.send('PUT', `/wallets/${alias}/psbt/${txid}`, { psbt: base64 });
  }

  broadcast(alias: string, txid: string): Promise<JsonResponse> {
    return this.send('POST', `/wallets/${alias}/psbt/${txid}/broadcast`);
  }

  /** Waits until the service reports exactly this balance (satoshis) for the wallet. */
  async waitForBalance(alias: string, expected: { total: number; confirmed?: number }, timeoutMs = 30_000): Promise<any> {
    let last: any;
    try {
      return await waitFor(async () => {
        last = (await this.details(alias)).balance;
        return last.total_sat === expected.total && (expected.confirmed === undefined || last.confirmed_sat === expected.confirmed) && last;
      }, `${alias}'s balance to be ${JSON.stringify(expected)} sat`, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}; the service last showed ${JSON.stringify(last)}`);
    }
  }

  /** Waits until the wallet's transaction list holds `txid` (the network txid) with these confirmations. */
  async waitForTransaction(alias: string, txid: string, confirmations: (n: number) => boolean, what: string): Promise<any> {
    return waitFor(async () => (await this.details(alias)).txlist.find((t: any) => t.txid === txid && confirmations(t.confirmations)), `${alias}: ${what}`);
  }
}

/** A node with a miner, the service on it (SQLite unless told), and an admin client. */
export interface ChainWorld {
  chain: Chain;
  server: TestServer;
  client: Client;
  close(): Promise<void>;
}

export async function startChainWorld(serverOptions: TestServerOptions = {}): Promise<ChainWorld> {
  const chain = await Chain.start();
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ ...serverOptions, env: { ...serviceEnv(chain.node), SERVICE_LOG_LEVEL: 'warn', ...serverOptions.env } });
    const client = await Client.forAdmin(server);
    const started = server;
    return {
      chain,
      server,
      client,
      async close() {
        await started.dispose();
        await chain.stop();
      },
    };
  } catch (error) {
    await server?.dispose();
    await chain.stop();
    throw error;
  }
}

/** Outpoints (`txid:vout`) a PSBT record spends. */
export function psbtInputs(record: any): string[] {
  return record.tx.vin.map((i: any) => `${i.txid}:${i.vout}`);
}

/** Satoshis paid to each address by a transaction decoded by Core (`getrawtransaction <txid> true`). */
export function paidTo(decoded: any): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of decoded.vout) {
    const address = o.scriptPubKey.address as string | undefined;
    if (address) out.set(address, (out.get(address) ?? 0) + sats(o.value));
  }
  return out;
}
