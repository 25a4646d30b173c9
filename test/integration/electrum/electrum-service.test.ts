/**
 * The service on an Electrum server (a real Fulcrum over a real Bitcoin Core): the service details and the
 * administration page name the source and its address; over TLS the server's certificate is pinned by its
 * fingerprint, through a SOCKS5 proxy the proxy resolves its name; and readiness fails naming the Electrum server while it is down, refuses connections
 * or follows another network, and passes again once it is back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBitcoind, type BitcoindNode } from '../../support/bitcoind.js';
import { freePort } from '../../support/free-port.js';
import { FULCRUM_NODE_ARGS, startFulcrum, type FulcrumServer } from '../../support/fulcrum.js';
import { describeWithFulcrum } from '../../support/fulcrum-locate.js';
import { TEST_ADMIN_PASSWORD, bearer, createToken, request, startTestServer, type TestServer } from '../../support/server.js';
import { startSocks5Proxy } from '../../support/socks5-proxy.js';
import { selfSignedCertificate } from '../../support/tls-certificate.js';
import { ensureWebAssets, WebClient } from '../../support/web-client.js';
import { waitFor } from '../bitcoind/chain-world.js';

describeWithFulcrum('the service on an Electrum server', () => {
  let node: BitcoindNode;
  let fulcrum: FulcrumServer;
  const servers: TestServer[] = [];

  async function serve(env: Record<string, string>): Promise<{ server: TestServer; auth: { authorization: string } }> {
    const server = await startTestServer({ env: { SERVICE_SYNC_INTERVAL: '0.2', SERVICE_LOG_LEVEL: 'warn', ...env } });
    servers.push(server);
    return { server, auth: { authorization: bearer((await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'electrum')).jwt_token) } };
  }

  const readiness = async (server: TestServer, auth: { authorization: string }) => request(`${server.api}/readiness`, { headers: auth });

  beforeAll(async () => {
    ensureWebAssets();
    node = await startBitcoind({ args: FULCRUM_NODE_ARGS });
    await node.rpc.call('generatetodescriptor', [110, 'raw(51)']);
    fulcrum = await startFulcrum(node);
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.dispose();
    await fulcrum?.stop();
    await node?.stop();
  });

  it('names the Electrum server as the chain source, at the node\'s tip, and is ready', async () => {
    const { server, auth } = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: fulcrum.url });
    const details = (await request(`${server.api}/service`, { headers: auth })).body;
    expect(details.config).toMatchObject({ bitcoind_url: null, electrum_url: fulcrum.url, electrum_tls_fingerprint: null, electrum_proxy: null });
    expect(details.chain).toMatchObject({ backend: 'electrum', network: 'regtest', tip_height: 110, tip_hash: await node.rpc.call('getbestblockhash') });
    expect((await readiness(server, auth)).body).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok' } });
    expect((await request(`${server.url}/healthz/ready`)).status).toBe(200);
    const web = new WebClient(server.url);
    await web.signIn('admin', TEST_ADMIN_PASSWORD);
    expect((await web.get('/admin')).text).toContain(`<dt>Chain source</dt><dd>Electrum server at ${fulcrum.url} (regtest)</dd>`);
  });

  it('is not ready while the Electrum server is down, naming it, and ready again once it is back', async () => {
    const { server, auth } = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: fulcrum.url });
    expect((await readiness(server, auth)).status).toBe(200);
    await fulcrum.kill();
    try {
      const down = await waitFor(async () => {
        const answer = await readiness(server, auth);
        return answer.status === 503 && answer;
      }, 'readiness to fail while Fulcrum is down');
      expect(down.body.checks.chain).toBe('failing');
      expect(down.body.reasons.chain).toMatch(/Electrum server/);
      expect(down.body.reasons.chain).not.toContain(String(fulcrum.port));
      expect((await request(`${server.url}/healthz/ready`)).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 2_100)); // the details keep a health report for 2 s
      expect((await request(`${server.api}/service`, { headers: auth })).body.chain.sync_state).toMatch(/^unavailable: /);
    } finally {
      await fulcrum.restart();
    }
    await waitFor(async () => (await readiness(server, auth)).status === 200, 'readiness once Fulcrum is back');
  });

  it('is not ready when nothing listens at electrum_url', async () => {
    const { server, auth } = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: `tcp://127.0.0.1:${await freePort()}` });
    const answer = await readiness(server, auth);
    expect(answer.status).toBe(503);
    expect(answer.body.reasons).toEqual({ chain: 'The Electrum server refused the connection' });
  });

  it('is not ready on an Electrum server of another network, naming both, and the details show the server\'s', async () => {
    const { server, auth } = await serve({ SERVICE_NETWORK: 'signet', SERVICE_ELECTRUM_URL: fulcrum.url });
    const answer = await readiness(server, auth);
    expect(answer.status).toBe(503);
    expect(answer.body.reasons).toEqual({ chain: 'The Electrum server follows regtest but the service is configured for signet' });
    expect((await request(`${server.api}/service`, { headers: auth })).body.chain).toMatchObject({ backend: 'electrum', network: 'regtest', sync_state: 'unavailable: wrong_network', tip_height: null });
  });

  it('reaches a TLS server through its pinned certificate fingerprint, and is not ready with another fingerprint or none', async () => {
    const certificate = selfSignedCertificate();
    const folder = mkdtempSync(join(tmpdir(), 'wcs-fulcrum-tls-'));
    const [certFile, keyFile] = [join(folder, 'cert.pem'), join(folder, 'key.pem')];
    writeFileSync(certFile, certificate.cert);
    writeFileSync(keyFile, certificate.key);
    const sslPort = await freePort();
    const tls = await startFulcrum(node, { args: ['-s', `127.0.0.1:${sslPort}`, '-c', certFile, '-k', keyFile] });
    try {
      const url = `ssl://127.0.0.1:${sslPort}`;
      const pinned = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: url, SERVICE_ELECTRUM_TLS_FINGERPRINT: certificate.fingerprint256 });
      expect((await readiness(pinned.server, pinned.auth)).body).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok' } });
      const details = (await request(`${pinned.server.api}/service`, { headers: pinned.auth })).body;
      expect(details.config).toMatchObject({ electrum_url: url, electrum_tls_fingerprint: certificate.fingerprint256.replaceAll(':', '').toLowerCase() });
      expect(details.chain).toMatchObject({ backend: 'electrum', tip_height: 110 });

      const other = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: url, SERVICE_ELECTRUM_TLS_FINGERPRINT: '00'.repeat(32) });
      const refused = await readiness(other.server, other.auth);
      expect(refused.status).toBe(503);
      expect(refused.body.reasons).toEqual({ chain: "The Electrum server's TLS certificate does not match the pinned fingerprint" });

      const unpinned = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: url });
      const untrusted = await readiness(unpinned.server, unpinned.auth);
      expect(untrusted.status).toBe(503);
      expect(untrusted.body.reasons.chain).toMatch(/^The Electrum server's TLS certificate is not trusted \(.+\); pin its fingerprint/);
    } finally {
      await tls.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reaches the server through a SOCKS5 proxy that resolves its name, and is not ready naming the proxy when it refuses', async () => {
    const proxy = await startSocks5Proxy();
    try {
      const url = `tcp://localhost:${fulcrum.port}`;
      const through = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: url, SERVICE_ELECTRUM_PROXY: proxy.url });
      expect((await readiness(through.server, through.auth)).status).toBe(200);
      expect((await request(`${through.server.api}/service`, { headers: through.auth })).body.config).toMatchObject({ electrum_url: url, electrum_proxy: proxy.url });
      expect(proxy.targets).toContainEqual({ addressType: 3, host: 'localhost', port: fulcrum.port });

      proxy.refuseWith = 5; // connection refused
      const refused = await serve({ SERVICE_NETWORK: 'regtest', SERVICE_ELECTRUM_URL: url, SERVICE_ELECTRUM_PROXY: proxy.url });
      const answer = await readiness(refused.server, refused.auth);
      expect(answer.status).toBe(503);
      expect(answer.body.reasons.chain).toMatch(/^The SOCKS5 proxy failed: /);
      expect(answer.body.reasons.chain).not.toContain(String(fulcrum.port));
    } finally {
      await proxy.close();
    }
  });
});
