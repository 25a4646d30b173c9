/**
 * The Electrum client against a scriptable Electrum server on loopback (real sockets): negotiation, batches,
 * timeouts, lost connections, garbage, TLS pinning and SOCKS5.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ElectrumClient } from '../../../../src/chain/electrum/client.js';
import { chainFailure } from '../../../support/chain-error.js';
import { FakeRpcError, NO_REPLY, startFakeElectrum, type FakeElectrumServer } from '../../../support/electrum-fake-server.js';

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
