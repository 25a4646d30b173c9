import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { givenSettings, loadConfig } from '../../../src/config.js';
import { recordGivenSettings, recordedLine } from '../../../src/cli/remembered-settings.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-remembered-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const file = () => JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;

describe('settings recorded by serve', () => {
  it('records what flags and variables gave, a flag over its variable, keeping what config.json held', () => {
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ rate_limit: 5, jwt_key: 'j'.repeat(40) }));
    const given = givenSettings({ flags: ['--port=8080'], env: { SERVICE_PORT: '9090', SERVICE_NETWORK: 'signet', SERVICE_DATABASE_URL: 'store.sqlite' } });
    const recorded = recordGivenSettings(folder, given);
    expect(file()).toEqual({ rate_limit: 5, jwt_key: 'j'.repeat(40), port: '8080', database_url: 'store.sqlite', network: 'signet' });
    expect((statSync(join(folder, 'config.json')).mode & 0o777).toString(8)).toBe('600');
    expect(recordedLine(recorded)).toContain('(port, database_url, network)');
    // Nothing new: nothing written, nothing said.
    expect(recordedLine(recordGivenSettings(folder, given))).toBeUndefined();
  });

  it('never records a secret, nor an address with credentials in it', () => {
    const given = givenSettings({
      env: {
        SERVICE_ADMIN_PASSWORD: 'admin-secret',
        SERVICE_JWT_KEY: 'k'.repeat(40),
        SERVICE_DATABASE_URL: 'postgres://wcs:db-secret@db/wcs',
        SERVICE_BITCOIND_URL: 'http://rpc:rpc-secret@127.0.0.1:8332',
        SERVICE_LOG_LEVEL: 'warn',
      },
    });
    const recorded = recordGivenSettings(folder, given);
    expect(readFileSync(join(folder, 'config.json'), 'utf8')).not.toMatch(/secret|kkkk/);
    expect(file()).toEqual({ log_level: 'warn' });
    expect(recorded.leftOut).toEqual(['database_url', 'admin_password', 'bitcoind_url', 'jwt_key']);
  });

  it('records a node with its cookie, and leaves out one whose password would be missing', () => {
    recordGivenSettings(folder, givenSettings({ env: { SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332', SERVICE_BITCOIND_COOKIE: '/node/.cookie' } }));
    expect(file()).toEqual({ bitcoind_url: 'http://127.0.0.1:8332', bitcoind_cookie: '/node/.cookie' });
    rmSync(join(folder, 'config.json'));
    const recorded = recordGivenSettings(folder, givenSettings({ env: { SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332', SERVICE_BITCOIND_USER: 'rpc', SERVICE_BITCOIND_PASSWORD: 'pw' } }));
    expect(recorded.written).toEqual([]);
    expect(recorded.leftOut).toEqual(['bitcoind_password', 'bitcoind_user', 'bitcoind_url']);
  });

  it('records an Electrum server with its fingerprint and proxy, and removes the other chain source when one replaces it', () => {
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ bitcoind_url: 'http://127.0.0.1:8332', bitcoind_cookie: '/node/.cookie', port: '8080' }));
    const electrum = givenSettings({ env: { SERVICE_ELECTRUM_URL: 'ssl://electrum.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'ab'.repeat(32), SERVICE_ELECTRUM_PROXY: 'socks5://127.0.0.1:9050' } });
    const recorded = recordGivenSettings(folder, electrum);
    expect(file()).toEqual({ bitcoind_cookie: '/node/.cookie', port: '8080', electrum_url: 'ssl://electrum.example:50002', electrum_tls_fingerprint: 'ab'.repeat(32), electrum_proxy: 'socks5://127.0.0.1:9050' });
    expect(recorded.removed).toEqual(['bitcoind_url']);
    expect(recordedLine(recorded)).toContain('removed (the other chain source): bitcoind_url');
    // A later command without settings finds the Electrum server; back to the node, the Electrum settings go.
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder } }).electrum.url).toBe('ssl://electrum.example:50002');
    recordGivenSettings(folder, givenSettings({ env: { SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332' } }));
    expect(file()).toEqual({ bitcoind_cookie: '/node/.cookie', port: '8080', bitcoind_url: 'http://127.0.0.1:8332' });
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder } }).bitcoind.url).toBe('http://127.0.0.1:8332');
  });
});
