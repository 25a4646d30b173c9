/** Settings at their edges: empty values, flags without values, where a refused value came from, secrets in config.json. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, configFileObject, exposedConfigFile, loadConfig } from '../../../src/config.js';
import { optionalText } from '../../../src/config/setting-values.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-config-edges-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const load = (env: Record<string, string> = {}, flags: string[] = []) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env }, flags });
const writeConfig = (object: Record<string, unknown>, mode = 0o600) => {
  const path = join(folder, 'config.json');
  writeFileSync(path, JSON.stringify(object));
  chmodSync(path, mode);
  return path;
};

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('an empty True/False setting means its default', () => {
  it('web_active stays on, api_active and webhook_allow_private stay off, from a variable, config.json or a flag', () => {
    expect(load({ SERVICE_WEB_ACTIVE: '' }).webActive).toBe(true);
    expect(load({ SERVICE_WEB_ACTIVE: '  ' }).webActive).toBe(true);
    expect(load({}, ['--web-active=']).webActive).toBe(true);
    expect(load({ SERVICE_API_ACTIVE: '', SERVICE_WEBHOOK_ALLOW_PRIVATE: '' })).toMatchObject({ apiActive: false, webhookAllowPrivate: false });
    writeConfig({ web_active: '' });
    expect(load().webActive).toBe(true);
    // An empty variable still wins over config.json: it says "the default", not "look further".
    writeConfig({ web_active: 'False', api_active: 'True' });
    expect(load({ SERVICE_WEB_ACTIVE: '', SERVICE_API_ACTIVE: '' })).toMatchObject({ webActive: true, apiActive: false });
    expect(load({ SERVICE_WEB_ACTIVE: 'no' }).webActive).toBe(false);
  });

  it('a number or a word still refuses an empty value, naming the setting', () => {
    expect(messageOf(() => load({ SERVICE_PORT: '' }))).toBe('Invalid setting SERVICE_PORT (from SERVICE_PORT): must be a whole number from 0 to 65535, got ""');
    expect(messageOf(() => load({ SERVICE_NETWORK: ' ' }))).toMatch(/^Invalid setting SERVICE_NETWORK \(from SERVICE_NETWORK\): must be one of/);
  });
});

describe('flags: every True/False flag may stand alone; another flag is never taken as a value', () => {
  it('takes --web-active and --webhook-allow-private alone as True, as --api-active', () => {
    expect(load({}, ['--web-active', '--port', '1', '--webhook-allow-private', '--api-active'])).toMatchObject({ webActive: true, port: 1, webhookAllowPrivate: true, apiActive: true });
    expect(load({}, ['--web-active', 'false', '--webhook-allow-private'])).toMatchObject({ webActive: false, webhookAllowPrivate: true });
  });

  it('refuses a setting flag followed by another flag, naming it; a value starting with -- goes after =', () => {
    expect(messageOf(() => load({}, ['--host', '--port', '1']))).toBe('Option --host needs a value');
    expect(messageOf(() => load({}, ['--admin-password', '--port=1']))).toBe('Option --admin-password needs a value');
    expect(load({}, ['--admin-password=--not-a-flag']).adminPassword).toBe('--not-a-flag');
    // A negative number is a value (and refused as one).
    expect(messageOf(() => load({}, ['--port', '-1']))).toMatch(/^Invalid setting SERVICE_PORT \(from --port\): .*got "-1"$/);
  });
});

describe('a refused value names where it came from', () => {
  it('database_url: the flag, the variable or config.json, in the order of the settings', () => {
    const path = join(folder, 'config.json');
    expect(messageOf(() => load({ SERVICE_DATABASE_URL: 'mysql://db/wcs' }))).toBe('Invalid setting SERVICE_DATABASE_URL (from SERVICE_DATABASE_URL): use a SQLite file path or a postgres:// address');
    expect(messageOf(() => load({}, ['--database', 'postgres://u:secret@[db/wcs']))).toBe('Invalid setting SERVICE_DATABASE_URL (from --database): not a valid postgres:// address');
    writeConfig({ database_url: 'mysql://db/wcs' });
    expect(messageOf(() => load())).toBe(`Invalid setting SERVICE_DATABASE_URL (from "database_url" in ${path}): use a SQLite file path or a postgres:// address`);
    // Checked in its place among the settings, before the network, not after all of them.
    expect(messageOf(() => load({ SERVICE_NETWORK: 'dogecoin' }))).toMatch(/^Invalid setting SERVICE_DATABASE_URL /);
    writeConfig({ database_url: 'postgres://u:p@db:5432/wcs' });
    expect(load().database).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/wcs' });
  });

  it('the chain and node checks name the source of the setting they refuse', () => {
    const core = { SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332', SERVICE_BITCOIND_COOKIE: '/tmp/.cookie' };
    expect(messageOf(() => load({ ...core, SERVICE_ELECTRUM_URL: 'tcp://127.0.0.1:50001' }))).toMatch(/^Invalid setting SERVICE_ELECTRUM_URL \(from SERVICE_ELECTRUM_URL\): the chain .*not both$/);
    expect(messageOf(() => load(core, ['--electrum-url', 'tcp://127.0.0.1:50001']))).toMatch(/^Invalid setting SERVICE_ELECTRUM_URL \(from --electrum-url\): /);
    expect(messageOf(() => load({}, ['--electrum-url', 'tcp://x.example:50001', '--electrum-tls-fingerprint', 'ab'.repeat(32)]))).toBe(
      'Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT (from --electrum-tls-fingerprint): only with an ssl:// SERVICE_ELECTRUM_URL (electrum_url)',
    );
    expect(messageOf(() => load({}, ['--bitcoind-url', 'http://127.0.0.1:8332']))).toMatch(/^Invalid setting SERVICE_BITCOIND_URL \(from --bitcoind-url\): give its credentials too/);
    const path = writeConfig({ electrum_proxy: 'socks5://127.0.0.1:9050' });
    expect(messageOf(() => load())).toBe(`Invalid setting SERVICE_ELECTRUM_PROXY (from "electrum_proxy" in ${path}): only with SERVICE_ELECTRUM_URL (electrum_url)`);
  });
});

describe('a readable config.json is reported when it holds credentials, and only then', () => {
  it.each([
    [{ bitcoind_url: 'http://rpc:rpc-secret@127.0.0.1:8332' }, ['bitcoind_url']],
    [{ database_url: 'postgres://wcs:db-secret@db:5432/wcs' }, ['database_url']],
    [{ electrum_proxy: 'socks5://tor:tor-secret@127.0.0.1:9050' }, ['electrum_proxy']],
    [{ cors_origins: ['https://app.example', 'https://u:p@other.example'] }, ['cors_origins']],
    [{ bitcoind_password: 'x', jwt_key: 'k'.repeat(32), admin_password: 'y' }, ['admin_password', 'bitcoind_password', 'jwt_key']],
  ])('%j', (object, secrets) => {
    const path = writeConfig(object, 0o644);
    expect(exposedConfigFile(folder)).toEqual({ path, mode: '644', secrets });
    chmodSync(path, 0o600);
    expect(exposedConfigFile(folder)).toBeUndefined();
  });

  it.each([[{ database_url: '/srv/wcs/service.sqlite' }], [{ database_url: 'postgres://db:5432/wcs' }], [{ bitcoind_url: 'http://127.0.0.1:8332', bitcoind_cookie: '/tmp/.cookie' }], [{ admin_password: '' }]])(
    'not %j',
    (object) => {
      writeConfig(object, 0o644);
      expect(exposedConfigFile(folder)).toBeUndefined();
    },
  );
});

describe('numbers and keys: what the setting means, nothing else', () => {
  it('sync_interval takes plain decimal seconds only', () => {
    expect(load({ SERVICE_SYNC_INTERVAL: '16' }).syncIntervalMs).toBe(16_000);
    expect(load({ SERVICE_SYNC_INTERVAL: ' 0.25 ' }).syncIntervalMs).toBe(250);
    expect(load({ SERVICE_SYNC_INTERVAL: '0' }).syncIntervalMs).toBe(0);
    for (const text of ['0x10', '1e3', '+5', '-1', 'Infinity', '.5', '5.', '86401', '']) {
      expect(messageOf(() => load({ SERVICE_SYNC_INTERVAL: text })), text).toBe(`Invalid setting SERVICE_SYNC_INTERVAL (from SERVICE_SYNC_INTERVAL): must be a number of seconds from 0 to 86400, got "${text}"`);
    }
    expect(messageOf(() => load({ SERVICE_PORT: '0x10' }))).toMatch(/^Invalid setting SERVICE_PORT .*whole number/);
  });

  it('jwt_key refuses a key of white space only, without repeating it', () => {
    expect(messageOf(() => load({ SERVICE_JWT_KEY: ' '.repeat(32) }))).toBe('Invalid setting SERVICE_JWT_KEY (from SERVICE_JWT_KEY): must not be only white space');
    expect(messageOf(() => load({ SERVICE_JWT_KEY: '\t \n'.repeat(20) }))).toBe('Invalid setting SERVICE_JWT_KEY (from SERVICE_JWT_KEY): must not be only white space');
    expect(load({ SERVICE_JWT_KEY: ` ${'k'.repeat(32)} ` }).jwtKey).toBe(` ${'k'.repeat(32)} `);
    expect(load({ SERVICE_JWT_KEY: '' }).jwtKey).toBeUndefined();
  });
});

describe('one host-name rule, one "empty means none"', () => {
  it('a trailing dot is allowed in the listening host and in Electrum and proxy addresses, where it is dropped', () => {
    expect(load({ SERVICE_HOST: 'wcs.example.' }).host).toBe('wcs.example.');
    const electrum = load({ SERVICE_ELECTRUM_URL: 'ssl://Electrum.Example.:50002', SERVICE_ELECTRUM_PROXY: 'socks5://tor.:9050' }).electrum;
    expect(electrum).toMatchObject({ url: 'ssl://electrum.example:50002', proxy: 'socks5://tor:9050' });
    for (const bad of ['ssl://a..b:50002', 'ssl://1.2.3.4.:50002', 'ssl://-a.example:50002']) {
      expect(messageOf(() => load({ SERVICE_ELECTRUM_URL: bad })), bad).toMatch(/^Invalid setting SERVICE_ELECTRUM_URL /);
    }
  });

  it('empty or white space is none, anything else is trimmed before it is read', () => {
    expect(optionalText('  ')).toBeUndefined();
    expect(optionalText(' x ')).toBe('x');
    expect(optionalText(' 7 ', Number)).toBe(7);
    expect(optionalText('', () => { throw new Error('not read'); })).toBeUndefined();
    expect(load({ SERVICE_ELECTRUM_URL: '   ', SERVICE_BITCOIND_COOKIE: '  ' })).toMatchObject({ electrum: { url: undefined }, bitcoind: { cookieFile: undefined } });
  });
});

describe('configFileObject', () => {
  it('gives the file as written (lists stay lists), refuses what loadConfig refuses, and is empty without a file', () => {
    expect(configFileObject(folder)).toEqual({});
    writeConfig({ network: 'regtest', port: 1111, cors_origins: ['https://a.example'] });
    expect(configFileObject(folder)).toEqual({ network: 'regtest', port: 1111, cors_origins: ['https://a.example'] });
    writeConfig({ prot: 1 });
    expect(messageOf(() => configFileObject(folder))).toMatch(/unknown setting "prot"/);
    writeConfig({ port: { nested: 1 } });
    expect(messageOf(() => configFileObject(folder))).toMatch(/setting "port" must be a string, number or boolean/);
  });
});
