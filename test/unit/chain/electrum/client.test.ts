/**
 * The Electrum client against a scriptable Electrum server on loopback (real sockets): negotiation, batches,
 * timeouts, lost connections, garbage, TLS pinning and SOCKS5.
 */
import { createHook } from 'node:async_hooks';
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ElectrumClient } from '../../../../src/chain/electrum/client.js';
import type { ChainLog } from '../../../../src/chain/types.js';
import { chainFailure } from '../../../support/chain-error.js';
import { FakeRpcError, NO_REPLY, startFakeElectrum, type FakeElectrumServer } from '../../../support/electrum-fake-server.js';
import { startSocks5Proxy } from '../../../support/socks5-proxy.js';
import { selfSignedCertificate, type SelfSignedCertificate } from '../../../support/tls-certificate.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function fake(options: Parameters<typeof startFakeElectrum>[0] = {}): Promise<FakeElectrumServer> {
  const server = await startFakeElectrum(options);
  cleanups.push(() => server.close());
  return server;
}

function client(options: ConstructorParameters<typeof ElectrumClient>[0]): ElectrumClient {
  const created = new ElectrumClient(options);
  cleanups.push(() => created.close());
  return created;
}

describe('negotiation', () => {
  it('asks server.version for 1.4 to 1.6 first, then server.features, and reports the server', async () => {
    const server = await fake({ protocol: '1.6', software: 'Fake 9.9' });
    const electrum = client({ url: server.url });
    expect(electrum.connected).toBe(false);
    const info = await electrum.connect();
    expect(info).toEqual({ software: 'Fake 9.9', protocol: '1.6', genesisHash: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206' });
    expect(electrum.connected).toBe(true);
    expect(server.requests.slice(0, 2).map((r) => r.method)).toEqual(['server.version', 'server.features']);
    const [name, range] = server.requests[0]!.params as [string, string[]];
    expect(name).toMatch(/^wcs \d+\.\d+\.\d+/);
    expect(range).toEqual(['1.4', '1.6']);
  });
});

describe('negotiation refusals', () => {
  it('refuses a server that agrees on a protocol older than 1.4, saying why', async () => {
    const server = await fake({ protocol: '1.2' });
    const error = await chainFailure(client({ url: server.url }).connect());
    expect(error.code).toBe('bad_response');
    expect(error.message).toContain('1.2');
    expect(error.message).toContain('1.4');
  });

  it('refuses a server that refuses our protocol range', async () => {
    const server = await fake();
    server.handle('server.version', () => {
      throw new FakeRpcError(1, 'unsupported protocol version: 1.6');
    });
    const error = await chainFailure(client({ url: server.url }).connect());
    expect(error.code).toBe('bad_response');
    expect(error.message).toMatch(/does not speak protocol 1\.4 to 1\.6 \(unsupported protocol version/);
  });

  it('refuses a server that does not tell its genesis hash', async () => {
    const server = await fake();
    server.handle('server.features', () => ({ hash_function: 'sha256' }));
    const error = await chainFailure(client({ url: server.url }).connect());
    expect(error.code).toBe('bad_response');
    expect(error.message).toContain('genesis');
  });

  it('says connection_refused when nothing listens, and bad_config for a url it cannot use', async () => {
    const port = await closedPort();
    const error = await chainFailure(client({ url: `tcp://127.0.0.1:${port}` }).connect());
    expect(error.code).toBe('connection_refused');
    expect(error.message).not.toContain(String(port));
    for (const url of ['http://127.0.0.1:50001', 'tcp://127.0.0.1', 'tcp://127.0.0.1:70000', 'electrum.example']) {
      expect(() => new ElectrumClient({ url })).toThrow(expect.objectContaining({ code: 'bad_config' }));
    }
    for (const url of ['TCP://[::1]:50001', 'ssl://electrum.example:50002/', 'tls://10.0.0.1:50002']) expect(() => new ElectrumClient({ url })).not.toThrow();
    expect(() => new ElectrumClient({ url: 'tcp://127.0.0.1:1', tlsFingerprint: 'ab'.repeat(32) })).toThrow(expect.objectContaining({ code: 'bad_config' }));
    expect(() => new ElectrumClient({ url: 'ssl://127.0.0.1:1', tlsFingerprint: 'abcd' })).toThrow(expect.objectContaining({ code: 'bad_config' }));
    expect(() => new ElectrumClient({ url: 'ssl://127.0.0.1:1', proxy: 'http://127.0.0.1:9050' })).toThrow(expect.objectContaining({ code: 'bad_config' }));
  });

  it('knows a server on this machine reached without a proxy (its transactions are read in small pages there)', () => {
    for (const url of ['tcp://127.0.0.1:50001', 'ssl://127.0.0.2:50002', 'TCP://[::1]:50001', 'tcp://localhost:50001']) expect(new ElectrumClient({ url }).onLoopback, url).toBe(true);
    for (const url of ['ssl://electrum.example:50002', 'tcp://10.0.0.1:50001', 'tcp://[2001:db8::1]:50001']) expect(new ElectrumClient({ url }).onLoopback, url).toBe(false);
    expect(new ElectrumClient({ url: 'tcp://127.0.0.1:50001', proxy: 'socks5://127.0.0.1:9050' }).onLoopback).toBe(false);
  });
});

describe('requests', () => {
  it('connects on the first request, and keeps the server error message and code', async () => {
    const server = await fake();
    server.handle('blockchain.transaction.get', ([txid]) => {
      throw new FakeRpcError(2, `no such mempool or blockchain transaction: ${String(txid)}`);
    });
    server.handle('blockchain.estimatefee', ([blocks]) => Number(blocks) / 1000);
    const electrum = client({ url: server.url });
    expect(await electrum.request('blockchain.estimatefee', [6])).toBe(0.006);
    const error = await chainFailure(electrum.request('blockchain.transaction.get', ['ab']));
    expect(error.code).toBe('rpc_error');
    expect(error.rpcCode).toBe(2);
    expect(error.reason).toBe('no such mempool or blockchain transaction: ab');
  });

  it('matches answers that come out of order to their requests', async () => {
    const server = await fake();
    server.handle('echo', async ([value, delayMs]) => {
      await sleep(Number(delayMs));
      return value;
    });
    const electrum = client({ url: server.url });
    const answers = await Promise.all([electrum.request('echo', ['slow', 60]), electrum.request('echo', ['fast', 0]), electrum.request('echo', ['middle', 20])]);
    expect(answers).toEqual(['slow', 'fast', 'middle']);
  });

  it('fails a request the server does not answer in time with timeout, and the connection goes on', async () => {
    const server = await fake();
    server.handle('blockchain.headers.subscribe', () => NO_REPLY);
    server.handle('echo', ([value]) => value);
    const electrum = client({ url: server.url, timeoutMs: 300 });
    const error = await chainFailure(electrum.request('blockchain.headers.subscribe', []));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('blockchain.headers.subscribe');
    expect(await electrum.request('echo', ['still here'])).toBe('still here');
    expect(server.connectionCount).toBe(1);
  });

  it('hands notifications to listeners until they unsubscribe', async () => {
    const server = await fake();
    const electrum = client({ url: server.url });
    await electrum.connect();
    const seen: Array<[string, unknown[]]> = [];
    const unsubscribe = electrum.onNotification((method, params) => seen.push([method, params]));
    server.notify('blockchain.headers.subscribe', [{ height: 101, hex: '00' }]);
    server.notify('blockchain.scripthash.subscribe', ['aa', 'bb']);
    await until(() => seen.length === 2);
    expect(seen).toEqual([
      ['blockchain.headers.subscribe', [{ height: 101, hex: '00' }]],
      ['blockchain.scripthash.subscribe', ['aa', 'bb']],
    ]);
    unsubscribe();
    server.notify('blockchain.scripthash.subscribe', ['cc', 'dd']);
    expect(await electrum.request('server.ping', [])).toBeNull();
    expect(seen).toHaveLength(2);
  });

  it('pings the server when idle', async () => {
    const server = await fake();
    const electrum = client({ url: server.url, keepAliveMs: 50 });
    await electrum.connect();
    await until(() => server.requests.some((r) => r.method === 'server.ping'));
  });

  it('drops a connection whose ping goes unanswered, and reconnects', async () => {
    const server = await fake();
    server.handle('server.ping', ({ length }, { connection }) => (connection === 1 && length === 0 ? NO_REPLY : null));
    const electrum = client({ url: server.url, keepAliveMs: 50, timeoutMs: 200 });
    let reconnects = 0;
    electrum.onReconnect(() => reconnects++);
    await electrum.connect();
    await until(() => reconnects === 1);
    expect(server.connectionCount).toBe(2);
    expect(electrum.connected).toBe(true);
  });
});

describe('batches', () => {
  it('pages a large batch at 300 calls, matches answers in any order, and keeps results in order', async () => {
    const server = await fake();
    server.reverseBatches = true;
    server.handle('blockchain.block.header', ([height]) => `header-${String(height)}`);
    const electrum = client({ url: server.url });
    const calls = Array.from({ length: 701 }, (_, height) => ({ method: 'blockchain.block.header', params: [height] }));
    const headers = await electrum.batch<string>(calls);
    expect(headers).toEqual(calls.map((_, height) => `header-${height}`));
    expect(server.batchSizes).toEqual([300, 300, 101]);
  });

  it('keeps each page within about 500 KB of request', async () => {
    const server = await fake();
    server.handle('blockchain.transaction.broadcast', ([hex]) => String(hex).length);
    const electrum = client({ url: server.url });
    const calls = Array.from({ length: 12 }, () => ({ method: 'blockchain.transaction.broadcast', params: ['ab'.repeat(100_000)] }));
    expect(await electrum.batch(calls)).toEqual(calls.map(() => 200_000));
    expect(server.batchSizes).toEqual([2, 2, 2, 2, 2, 2]);
    expect(await electrum.batch([])).toEqual([]);
  });

  it('pages smaller when asked, for calls with large answers', async () => {
    const server = await fake();
    server.handle('blockchain.transaction.get', ([txid]) => `raw-${String(txid)}`);
    const electrum = client({ url: server.url });
    const calls = Array.from({ length: 60 }, (_, n) => ({ method: 'blockchain.transaction.get', params: [n] }));
    expect(await electrum.batch(calls, { maxCallsPerPage: 25 })).toEqual(calls.map((_, n) => `raw-${n}`));
    expect(server.batchSizes).toEqual([25, 25, 10]);
  });

  it('pages shrink once answers turn out large, so one answer line stays near 1 MiB', async () => {
    const server = await fake();
    const transaction = 'ab'.repeat(50_000);
    server.handle('blockchain.transaction.get', () => transaction);
    const electrum = client({ url: server.url });
    const calls = Array.from({ length: 300 }, (_, n) => ({ method: 'blockchain.transaction.get', params: [String(n)] }));
    expect(await electrum.batch(calls)).toEqual(calls.map(() => transaction));
    // The first two pages go out before any answer, on a guess of 16 KiB per transaction; then 10 of 100 KB fit.
    expect(server.batchSizes.slice(0, 2)).toEqual([64, 64]);
    expect(server.batchSizes.slice(2)).toEqual([...Array<number>(17).fill(10), 2]);
  });

  it('falls back to pipelined single requests when the server refuses batches', async () => {
    const server = await fake();
    server.refuseBatches = true;
    server.handle('double', async ([n]) => {
      await sleep(Number(n) % 3);
      return Number(n) * 2;
    });
    const logged: string[] = [];
    const log: ChainLog = (_level, message) => logged.push(message);
    const electrum = client({ url: server.url, log });
    const calls = Array.from({ length: 400 }, (_, n) => ({ method: 'double', params: [n] }));
    expect(await electrum.batch(calls)).toEqual(calls.map((_, n) => n * 2));
    expect(await electrum.batch(calls.slice(0, 5))).toEqual([0, 2, 4, 6, 8]);
    // The refusal is learnt once per connection: the later batch went as single requests.
    expect(server.batchSizes.length).toBeLessThanOrEqual(2);
    expect(server.requests.filter((r) => r.method === 'double')).toHaveLength(405);
    expect(logged.filter((m) => m.includes('refused a JSON-RPC batch'))).toHaveLength(1);
  });

  it('a call the server fails rejects the batch with its error; batchSettled gives each outcome', async () => {
    const server = await fake();
    server.handle('blockchain.transaction.get', ([txid]) => {
      if (txid === 'missing') throw new FakeRpcError(2, 'No such mempool or blockchain transaction');
      return `raw-${String(txid)}`;
    });
    const electrum = client({ url: server.url });
    const calls = ['a', 'missing', 'c'].map((txid) => ({ method: 'blockchain.transaction.get', params: [txid] }));
    const error = await chainFailure(electrum.batch(calls));
    expect(error.code).toBe('rpc_error');
    expect(error.reason).toBe('No such mempool or blockchain transaction');
    const outcomes = await electrum.batchSettled(calls);
    expect(outcomes.map((o) => (o.ok ? o.result : o.error.code))).toEqual(['raw-a', 'rpc_error', 'raw-c']);
  });

  it('a batch whose connection is lost rejects with unreachable', async () => {
    const server = await fake();
    server.handle('slow', () => NO_REPLY);
    const electrum = client({ url: server.url });
    await electrum.connect();
    const pending = electrum.batch(Array.from({ length: 10 }, () => ({ method: 'slow', params: [] })));
    await until(() => server.batchSizes.length === 1);
    server.dropConnections();
    expect((await chainFailure(pending)).code).toBe('unreachable');
  });
});

describe('lost connections', () => {
  it('fails pending requests with unreachable, reconnects, negotiates again and tells the listeners', async () => {
    const server = await fake();
    server.handle('blockchain.headers.subscribe', ({ length }, { connection }) => (connection === 1 && length === 0 ? NO_REPLY : { height: 7, hex: '00' }));
    const electrum = client({ url: server.url });
    let reconnects = 0;
    electrum.onReconnect(() => reconnects++);
    await electrum.connect();
    const pending = electrum.request('blockchain.headers.subscribe', []);
    await until(() => server.requests.some((r) => r.method === 'blockchain.headers.subscribe'));
    server.dropConnections();
    const error = await chainFailure(pending);
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('lost');
    await until(() => reconnects === 1);
    expect(electrum.connected).toBe(true);
    expect(server.requests.filter((r) => r.method === 'server.version')).toHaveLength(2);
    expect(await electrum.request('blockchain.headers.subscribe', [])).toEqual({ height: 7, hex: '00' });
  });

  it('keeps trying while the server turns connections away, then gets through', async () => {
    const server = await fake();
    const electrum = client({ url: server.url });
    let reconnects = 0;
    electrum.onReconnect(() => reconnects++);
    await electrum.connect();
    server.rejectConnections = true;
    server.dropConnections();
    await server.waitForConnections(3); // two refused attempts after the first connection
    expect(electrum.connected).toBe(false);
    // Meanwhile a request fails at once with why the last attempt failed.
    expect((await chainFailure(electrum.request('server.ping', []))).code).toBe('unreachable');
    server.rejectConnections = false;
    await until(() => reconnects === 1);
    expect(electrum.connected).toBe(true);
  });

  it('drops the connection on a line that is not JSON-RPC, failing pending calls with bad_response, then reconnects', async () => {
    const server = await fake();
    server.handle('slow', () => NO_REPLY);
    const electrum = client({ url: server.url });
    let reconnects = 0;
    electrum.onReconnect(() => reconnects++);
    await electrum.connect();
    for (const garbage of ['<html>502 Bad Gateway</html>\n', '"just a string"\n', '{"id":"x","result":1}\n', '[]\n']) {
      const pending = electrum.request('slow', []);
      await until(() => server.requests.filter((r) => r.method === 'slow').length === reconnects + 1);
      server.sendRaw(garbage);
      const error = await chainFailure(pending);
      expect(error.code).toBe('bad_response');
      const before = reconnects;
      await until(() => reconnects === before + 1);
    }
  });

  it('close() fails pending calls, stops reconnecting and leaves no timer behind', async () => {
    const server = await fake();
    server.handle('slow', () => NO_REPLY);
    const timers = trackTimers();
    cleanups.push(async () => timers.stop());
    const electrum = new ElectrumClient({ url: server.url, timeoutMs: 5_000 });
    await electrum.connect();
    const pending = electrum.request('slow', []);
    await until(() => server.requests.some((r) => r.method === 'slow'));
    await electrum.close();
    expect((await chainFailure(pending)).code).toBe('unreachable');
    expect(electrum.connected).toBe(false);
    expect(await timers.pending()).toEqual([]);
    expect((await chainFailure(electrum.request('server.ping', []))).code).toBe('unreachable');
    expect((await chainFailure(electrum.connect())).code).toBe('unreachable');

    // Closed while waiting to reconnect.
    const second = new ElectrumClient({ url: server.url });
    await second.connect();
    server.dropConnections();
    await until(() => !second.connected);
    await second.close();
    expect(await timers.pending()).toEqual([]);
    const connections = server.connectionCount;
    await sleep(700);
    expect(server.connectionCount).toBe(connections);
  });
});

describe('silent peers', () => {
  it('says timeout when a server accepts the connection but never answers server.version, or a proxy never answers', async () => {
    const silent = await silentServer();
    const error = await chainFailure(client({ url: `tcp://127.0.0.1:${silent.port}`, timeoutMs: 300 }).connect());
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('server.version');
    const viaSilentProxy = await chainFailure(client({ url: 'tcp://electrum.example:50001', proxy: `socks5://127.0.0.1:${silent.port}`, timeoutMs: 300 }).connect());
    expect(viaSilentProxy.code).toBe('timeout');
  });

  it('close() during a connection attempt ends it at once and leaves no timer', async () => {
    const silent = await silentServer();
    const timers = trackTimers();
    cleanups.push(async () => timers.stop());
    for (const proxy of [undefined, `socks5://127.0.0.1:${silent.port}`]) {
      const electrum = new ElectrumClient({ url: proxy ? 'tcp://electrum.example:50001' : `tcp://127.0.0.1:${silent.port}`, proxy, timeoutMs: 60_000 });
      const connecting = electrum.connect();
      await until(() => silent.connections > 0);
      await electrum.close();
      expect((await chainFailure(connecting)).code).toBe('unreachable');
      expect(await timers.pending()).toEqual([]);
      silent.connections = 0;
    }
  });
});

describe('line limits', () => {
  it('reads an answer that arrives in many small pieces', async () => {
    const server = await fake();
    const big = 'ab'.repeat(1_000_000);
    server.handle('blockchain.transaction.get', () => big);
    const electrum = client({ url: server.url });
    expect(await electrum.request('blockchain.transaction.get', ['x'])).toBe(big);
  });
});

describe('TLS', () => {
  let certificate: SelfSignedCertificate;
  beforeAll(() => {
    certificate = selfSignedCertificate();
  });

  it('accepts a self-signed certificate whose fingerprint is pinned (colons or not)', async () => {
    const server = await fake({ tls: certificate });
    expect((await client({ url: server.url, tlsFingerprint: certificate.fingerprint256 }).connect()).protocol).toBe('1.4');
    const bare = certificate.fingerprint256.replace(/:/g, '').toLowerCase();
    expect((await client({ url: server.url.replace('127.0.0.1', 'localhost'), tlsFingerprint: bare }).connect()).protocol).toBe('1.4');
  });

  it('refuses a certificate that does not match the pinned fingerprint', async () => {
    const server = await fake({ tls: certificate });
    const error = await chainFailure(client({ url: server.url, tlsFingerprint: 'ab'.repeat(32) }).connect());
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('does not match');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a self-signed certificate without a pinned fingerprint', async () => {
    const server = await fake({ tls: certificate });
    const error = await chainFailure(client({ url: server.url.replace('127.0.0.1', 'localhost') }).connect());
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('not trusted');
    expect(server.requests).toHaveLength(0);
  });
});

describe('SOCKS5', () => {
  it('connects through the proxy, letting it resolve the host name, over TCP and TLS', async () => {
    const proxy = await startSocks5Proxy();
    cleanups.push(() => proxy.close());
    const server = await fake();
    const viaProxy = client({ url: `tcp://localhost:${server.port}`, proxy: proxy.url });
    expect((await viaProxy.connect()).protocol).toBe('1.4');
    expect(await viaProxy.request('server.ping', [])).toBeNull();
    expect(proxy.targets).toEqual([{ addressType: 3, host: 'localhost', port: server.port }]);

    const certificate = selfSignedCertificate();
    const secure = await fake({ tls: certificate });
    const tlsViaProxy = client({ url: `ssl://localhost:${secure.port}`, proxy: proxy.url, tlsFingerprint: certificate.fingerprint256 });
    expect((await tlsViaProxy.connect()).protocol).toBe('1.4');
    expect(proxy.targets[1]).toEqual({ addressType: 3, host: 'localhost', port: secure.port });
  });

  it('says unreachable when the proxy cannot reach the server or is not there', async () => {
    const proxy = await startSocks5Proxy();
    cleanups.push(() => proxy.close());
    proxy.refuseWith = 4;
    const error = await chainFailure(client({ url: 'tcp://abcdefghijklmnop.onion:50001', proxy: proxy.url }).connect());
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('host unreachable');
    expect(proxy.targets).toEqual([{ addressType: 3, host: 'abcdefghijklmnop.onion', port: 50001 }]);

    const port = await closedPort();
    const noProxy = await chainFailure(client({ url: 'tcp://abcdefghijklmnop.onion:50001', proxy: `socks5://127.0.0.1:${port}` }).connect());
    expect(noProxy.code).toBe('unreachable');
    expect(noProxy.message).toContain('SOCKS5 proxy is unreachable');
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for a condition that the test's events make true (fails the test through its timeout otherwise). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

/** A TCP server that accepts connections and never writes a byte. */
async function silentServer(): Promise<{ port: number; connections: number }> {
  const sockets = new Set<net.Socket>();
  const state = { port: 0, connections: 0 };
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

/**
 * Watches the timers created from now on (through async_hooks) and lists those of the Electrum client neither
 * fired nor cleared, by the stack that created them.
 */
function trackTimers(): { pending(): Promise<string[]>; stop(): void } {
  const live = new Map<number, string>();
  const hook = createHook({
    init(asyncId, type) {
      if (type === 'Timeout') live.set(asyncId, new Error().stack ?? '');
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    // Node reports a cleared timer's end on a later turn.
    pending: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return [...live.values()].filter((stack) => stack.includes('/src/chain/electrum/'));
    },
    stop: () => hook.disable(),
  };
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
