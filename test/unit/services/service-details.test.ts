import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { ServiceError } from '../../../src/services/errors.js';
import { HealthService } from '../../../src/services/health.js';
import { ServiceDetailsService, formatLastUpdate, publicConfig } from '../../../src/services/service-details.js';

const config = loadConfig({
  env: {
    SERVICE_DATA_FOLDER: '/srv/wcs',
    SERVICE_ADMIN_PASSWORD: 'admin-secret',
    SERVICE_JWT_KEY: 'jwt-secret-0123456789-0123456789-0123',
    SERVICE_BITCOIND_URL: 'https://user:pw-secret@node.example:8332/',
    SERVICE_BITCOIND_COOKIE: '/home/u/.bitcoin/.cookie',
    SERVICE_DATABASE_URL: 'postgres://wcs:db-secret@db/wcs',
  },
});

describe('formatLastUpdate', () => {
  it.each([
    [Date.UTC(2024, 0, 2, 3, 4, 5), '01/02/2024, 03:04:05'],
    [Date.UTC(1999, 11, 31, 23, 59, 59, 999), '12/31/1999, 23:59:59'],
  ])('%d is %s', (ms, text) => expect(formatLastUpdate(ms)).toBe(text));
});

describe('publicConfig', () => {
  it('holds auth as decided and no secret', () => {
    const shown = publicConfig(config);
    expect(shown.auth).toEqual({ method: 'usernamepassword', password_min_chars: 8, rate_limit: '10', registration_link_timeout: '1' });
    const text = JSON.stringify(shown);
    for (const secret of ['admin-secret', 'jwt-secret', 'pw-secret', 'db-secret', '.cookie', 'user:']) expect(text).not.toContain(secret);
    expect(shown).toMatchObject({ database: 'postgres', bitcoind_url: 'https://node.example:8332/', bitcoind_auth: 'cookie', bitcoind_blocks_folder: null });
  });

  it('shows the node\'s blocks folder when one is given', () => {
    const withFolder = loadConfig({ env: { SERVICE_DATA_FOLDER: '/srv/wcs', SERVICE_BITCOIND_BLOCKS_FOLDER: tmpdir() } });
    expect(publicConfig(withFolder).bitcoind_blocks_folder).toBe(tmpdir());
  });
  it('shows the Electrum server, its pinned fingerprint and proxy when it is the chain source', () => {
    expect(publicConfig(config)).toMatchObject({ electrum_url: null, electrum_tls_fingerprint: null, electrum_proxy: null });
    const electrum = loadConfig({
      env: { SERVICE_DATA_FOLDER: '/srv/wcs', SERVICE_ELECTRUM_URL: 'ssl://electrum.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'AB:'.repeat(31) + 'AB', SERVICE_ELECTRUM_PROXY: 'socks5://127.0.0.1:9050' },
    });
    expect(publicConfig(electrum)).toMatchObject({ bitcoind_url: null, bitcoind_auth: 'none', electrum_url: 'ssl://electrum.example:50002', electrum_tls_fingerprint: 'ab'.repeat(32), electrum_proxy: 'socks5://127.0.0.1:9050' });
  });
});

describe('ServiceDetailsService', () => {
  const service = new ServiceDetailsService({ config, version: '9.9.9', now: () => Date.UTC(2025, 4, 6, 7, 8, 9) });

  it('is for admins only', async () => {
    await expect(service.details({ userName: 'bob', isAdmin: false })).rejects.toMatchObject({ kind: 'forbidden', code: 'forbidden' });
    await expect(service.details({ userName: 'bob', isAdmin: false })).rejects.toBeInstanceOf(ServiceError);
  });

  it('takes wallet lists and chain status from its sources, for the caller', async () => {
    const empty = await service.details({ userName: 'admin', isAdmin: true });
    expect(empty).toMatchObject({ chain: null, wallets_names: [], alias_name: {}, name_alias: {}, wallets_alias: [], last_update: '05/06/2025, 07:08:09' });
    const withSources = new ServiceDetailsService({
      config,
      version: '9.9.9',
      now: () => Date.UTC(2025, 4, 6, 7, 8, 9),
      wallets: {
        listFor: async (p) => ({ wallets_names: [`${p.userName}'s wallet`], alias_name: { w1: `${p.userName}'s wallet` }, name_alias: { [`${p.userName}'s wallet`]: 'w1' }, wallets_alias: ['w1'] }),
      },
      chain: { status: async () => ({ backend: 'bitcoind', network: 'mainnet', tip_height: 101, tip_hash: '00'.repeat(32), sync_state: 'synced' }) },
    });
    const filled = await withSources.details({ userName: 'admin', isAdmin: true });
    expect(Object.keys(filled)).toEqual(['data_folder', 'config', 'version', 'network', 'chain', 'wallets_names', 'last_update', 'alias_name', 'name_alias', 'wallets_alias']);
    expect(filled).toMatchObject({ data_folder: '/srv/wcs', version: '9.9.9', network: 'mainnet', wallets_names: ["admin's wallet"], wallets_alias: ['w1'], chain: { tip_height: 101 } });
  });
});

describe('HealthService', () => {
  it('is ready when every check answers, names failing and timed-out checks otherwise', async () => {
    const health = new HealthService([{ name: 'store', check: async () => {} }], 50);
    expect(await health.readiness()).toEqual({ ready: true, checks: { store: 'ok' }, reasons: {} });
    health.addCheck({ name: 'chain', check: () => Promise.reject(new Error('connection refused')), publicReason: true });
    health.addCheck({ name: 'slow', check: () => new Promise((resolve) => setTimeout(resolve, 500)) });
    health.addCheck({ name: 'db', check: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432')) });
    // Only reasons marked public are shown.
    expect(await health.readiness()).toEqual({
      ready: false,
      checks: { store: 'ok', chain: 'failing', slow: 'failing', db: 'failing' },
      reasons: { chain: 'connection refused' },
    });
    expect(() => health.addCheck({ name: 'store', check: async () => {} })).toThrow(/already registered/);
  });
});
