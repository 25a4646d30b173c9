/**
 * The Electrum client against a real Fulcrum over a real Bitcoin Core (regtest): negotiation, a batch of block
 * headers checked against the node's, a server error kept, TLS with a pinned self-signed certificate, and a
 * restart of Fulcrum survived.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ElectrumClient } from '../../../src/chain/electrum/client.js';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { chainFailure } from '../../support/chain-error.js';
import { freePort } from '../../support/free-port.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { FULCRUM_NODE_ARGS, headerHash, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';
import { selfSignedCertificate, type SelfSignedCertificate } from '../../support/tls-certificate.js';

const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';
const BLOCKS = 20;
/** Calls in the batch: three pages of the client's 300. */
const CALLS = 701;

describeWithFulcrum('Electrum client against Fulcrum', () => {
  let node: BitcoindNode;
  let fulcrum: FulcrumServer;
  let client: ElectrumClient;
  let certificate: SelfSignedCertificate;
  let certFolder: string | undefined;
  let sslPort: number;
  beforeAll(async () => {
    node = await startBitcoind({ args: FULCRUM_NODE_ARGS });
    const address = await node.rpc.call<string>('getnewaddress', []).catch(async () => {
      await node.rpc.call('createwallet', ['miner']);
      return node.rpc.call<string>('getnewaddress', []);
    });
    await node.rpc.call('generatetoaddress', [BLOCKS, address]);
    certificate = selfSignedCertificate();
    certFolder = mkdtempSync(join(tmpdir(), 'wcs-fulcrum-cert-'));
    writeFileSync(join(certFolder, 'cert.pem'), certificate.cert);
    writeFileSync(join(certFolder, 'key.pem'), certificate.key);
    sslPort = await freePort();
    fulcrum = await startFulcrum(node, { args: ['-s', `127.0.0.1:${sslPort}`, '-c', join(certFolder, 'cert.pem'), '-k', join(certFolder, 'key.pem')] });
    client = new ElectrumClient({ url: fulcrum.url, timeoutMs: 10_000 });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await fulcrum?.stop();
    await node?.stop();
    if (certFolder) rmSync(certFolder, { recursive: true, force: true });
  });

  it('negotiates protocol 1.4 to 1.6 and reads the regtest genesis hash', async () => {
    const info = await client.connect();
    expect(info.software).toMatch(/^Fulcrum \d+\.\d+/);
    // Fulcrum 2 agrees on 1.6; older ones (1.9 and up) on 1.4 or 1.5.
    expect(info.protocol).toMatch(/^1\.[4-6](\.\d+)?$/);
    expect(info.genesisHash).toBe(REGTEST_GENESIS);
    expect(client.connected).toBe(true);
  });

  it('reads block headers in one paged batch of 701 calls, each matching the node, in order', async () => {
    const calls = Array.from({ length: CALLS }, (_, i) => ({ method: 'blockchain.block.header', params: [i % (BLOCKS + 1)] }));
    const headers = await client.batch<string>(calls);
    expect(headers).toHaveLength(CALLS);
    const hashes = [REGTEST_GENESIS];
    for (let height = 1; height <= BLOCKS; height++) hashes.push(await node.rpc.call<string>('getblockhash', [height]));
    expect(headers.map(headerHash)).toEqual(calls.map((_, i) => hashes[i % (BLOCKS + 1)]));
    const outcomes = await client.batchSettled([
      { method: 'blockchain.block.header', params: [1] },
      { method: 'blockchain.block.header', params: [BLOCKS + 1000] },
    ]);
    expect(outcomes[0]).toEqual({ ok: true, result: headers[1] });
    expect(outcomes[1]!.ok).toBe(false);
  });

  it("keeps Fulcrum's error for an unknown transaction", async () => {
    const error = await chainFailure(client.request('blockchain.transaction.get', ['00'.repeat(32)]));
    expect(error.code).toBe('rpc_error');
    expect(error.reason).toBeTruthy();
    expect(typeof error.rpcCode).toBe('number');
  });

  it('talks TLS to Fulcrum with its self-signed certificate pinned, and refuses it otherwise', async () => {
    const pinned = new ElectrumClient({ url: `ssl://127.0.0.1:${sslPort}`, tlsFingerprint: certificate.fingerprint256 });
    try {
      expect((await pinned.connect()).genesisHash).toBe(REGTEST_GENESIS);
      expect(headerHash(await pinned.request<string>('blockchain.block.header', [BLOCKS]))).toBe(await node.rpc.call<string>('getblockhash', [BLOCKS]));
    } finally {
      await pinned.close();
    }
    for (const options of [{ tlsFingerprint: 'ab'.repeat(32) }, {}]) {
      const refused = new ElectrumClient({ url: `ssl://localhost:${sslPort}`, ...options });
      try {
        const error = await chainFailure(refused.connect());
        expect(error.code).toBe('unreachable');
        expect(error.message).toMatch(/does not match the pinned fingerprint|not trusted/);
      } finally {
        await refused.close();
      }
    }
  });

  it('comes back after Fulcrum is killed and restarted, and tells its listeners', async () => {
    let reconnects = 0;
    const unsubscribe = client.onReconnect(() => reconnects++);
    await fulcrum.kill();
    expect((await chainFailure(client.request('server.ping', []))).code).toMatch(/^(unreachable|connection_refused)$/);
    await fulcrum.restart();
    while (reconnects === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    unsubscribe();
    const tip = await client.request<{ height: number; hex: string }>('blockchain.headers.subscribe', []);
    expect(tip.height).toBe(BLOCKS);
    expect(headerHash(tip.hex)).toBe(await node.rpc.call<string>('getbestblockhash'));
  });
});
