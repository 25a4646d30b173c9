import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-config-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  // A home folder of its own: the developer's ~/.wcs may hold a config.json of settings `wcs serve` remembered.
  let home: string | undefined;
  beforeEach(() => {
    home = process.env.HOME;
    process.env.HOME = folder;
  });
  afterEach(() => {
    if (home === undefined) delete process.env.HOME;
    else process.env.HOME = home;
  });

  it('uses ~/.wcs, 127.0.0.1:25441, SQLite in the data folder, API off, mainnet', () => {
    const config = loadConfig({ env: {} });
    expect(homedir()).toBe(folder);
    expect(config.dataFolder).toBe(join(homedir(), '.wcs'));
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 25441,
      apiActive: false,
      network: 'mainnet',
      maxFeeRate: 1000,
      maxPendingPsbts: 100,
      tokenMaxLifeSeconds: 365 * 86_400,
      auth: { passwordMinChars: 8, rateLimit: 10, registrationLinkTimeoutHours: 1 },
      logLevel: 'info',
      corsOrigins: [],
      trustProxy: [],
      adminPassword: undefined,
      jwtKey: undefined,
    });
    expect(config.database).toEqual({ kind: 'sqlite', path: join(homedir(), '.wcs', 'service.sqlite') });
  });
});

describe('loadConfig sources', () => {
  it('reads SERVICE_* variables', () => {
    const config = loadConfig({
      env: {
        SERVICE_DATA_FOLDER: folder,
        SERVICE_PORT: '8080',
        SERVICE_HOST: '0.0.0.0',
        SERVICE_API_ACTIVE: 'True',
        SERVICE_NETWORK: 'regtest',
        SERVICE_DATABASE_URL: 'postgres://u:p@db:5432/wcs',
        SERVICE_BITCOIND_URL: 'http://127.0.0.1:18443',
        SERVICE_BITCOIND_COOKIE: '/tmp/.cookie',
        SERVICE_MAX_FEE_RATE: '250',
        SERVICE_TOKEN_MAX_LIFE: '30 days',
        SERVICE_PASSWORD_MIN_CHARS: '12',
        SERVICE_RATE_LIMIT: '5',
        SERVICE_REGISTRATION_LINK_TIMEOUT: '24',
        SERVICE_LOG_LEVEL: 'warn',
        SERVICE_CORS_ORIGINS: 'https://a.example, http://localhost:3000',
        SERVICE_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8, ::1',
      },
    });
    expect(config).toMatchObject({
      dataFolder: folder,
      port: 8080,
      host: '0.0.0.0',
      apiActive: true,
      network: 'regtest',
      database: { kind: 'postgres', url: 'postgres://u:p@db:5432/wcs' },
      bitcoind: { url: 'http://127.0.0.1:18443', cookieFile: '/tmp/.cookie' },
      maxFeeRate: 250,
      tokenMaxLifeSeconds: 30 * 86_400,
      auth: { passwordMinChars: 12, rateLimit: 5, registrationLinkTimeoutHours: 24 },
      logLevel: 'warn',
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      trustProxy: ['127.0.0.1', '10.0.0.0/8', '::1'],
    });
  });

  it.each([['True', true], ['true', true], ['1', true], ['yes', true], ['False', false], ['0', false], ['no', false]])(
    'SERVICE_API_ACTIVE=%s is %s',
    (text, active) => {
      expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_API_ACTIVE: text } }).apiActive).toBe(active);
    },
  );

  it('takes flags over environment over the config file', () => {
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ port: 1111, host: '10.0.0.1', network: 'signet', cors_origins: ['https://f.example'], trust_proxy: ['10.0.0.0/8', 'fd00::/8'] }));
    const fileOnly = loadConfig({ env: { SERVICE_DATA_FOLDER: folder } });
    expect(fileOnly).toMatchObject({ port: 1111, host: '10.0.0.1', network: 'signet', corsOrigins: ['https://f.example'], trustProxy: ['10.0.0.0/8', 'fd00::/8'] });
    const envOverFile = loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_PORT: '2222' } });
    expect(envOverFile).toMatchObject({ port: 2222, host: '10.0.0.1' });
    const flagOverEnv = loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_PORT: '2222' }, flags: ['--port', '3333', '--host=::1'] });
    expect(flagOverEnv).toMatchObject({ port: 3333, host: '::1' });
  });

  it('takes the node\'s blocks folder as an absolute path or from ~/, and a file is not a folder', () => {
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_BITCOIND_BLOCKS_FOLDER: folder } }).bitcoind.blocksFolder).toBe(folder);
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_BITCOIND_BLOCKS_FOLDER: '~/' } }).bitcoind.blocksFolder).toBe(homedir());
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder } }).bitcoind.blocksFolder).toBeUndefined();
    writeFileSync(join(folder, 'blk00000.dat'), '');
    const error = errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_BITCOIND_BLOCKS_FOLDER: join(folder, 'blk00000.dat') } }));
    expect(error.message).toMatch(/^Invalid setting SERVICE_BITCOIND_BLOCKS_FOLDER .*must be a folder that exists and can be read/);
  });

  it('without the setting, takes the blocks folder beside the cookie when it holds block files; `none` turns that off', () => {
    const nodeFolder = join(folder, 'node', 'regtest');
    const cookie = join(nodeFolder, '.cookie');
    mkdirSync(join(nodeFolder, 'blocks'), { recursive: true });
    writeFileSync(cookie, '__cookie__:secret');
    const blocksWith = (env: Record<string, string>) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_BITCOIND_COOKIE: cookie, ...env } }).bitcoind.blocksFolder;
    // A folder without block files (a node that keeps its blocks elsewhere, -blocksdir) is not taken.
    expect(blocksWith({})).toBeUndefined();
    writeFileSync(join(nodeFolder, 'blocks', 'blk00000.dat'), '');
    expect(blocksWith({})).toBe(join(nodeFolder, 'blocks'));
    expect(blocksWith({ SERVICE_BITCOIND_BLOCKS_FOLDER: 'none' })).toBeUndefined();
    expect(blocksWith({ SERVICE_BITCOIND_BLOCKS_FOLDER: ' None ' })).toBeUndefined();
    expect(blocksWith({ SERVICE_BITCOIND_BLOCKS_FOLDER: folder })).toBe(folder);
    // A user and password instead of the cookie: nothing says where the node's folder is.
    expect(blocksWith({ SERVICE_BITCOIND_USER: 'u', SERVICE_BITCOIND_PASSWORD: 'p' })).toBeUndefined();
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_BITCOIND_COOKIE: join(folder, 'elsewhere', '.cookie') } }).bitcoind.blocksFolder).toBeUndefined();
  });

  it('finds the data folder from the flag and resolves a relative SQLite path inside it', () => {
    const config = loadConfig({ env: {}, flags: ['--data-folder', folder, '--database', 'sqlite:other.db'] });
    expect(config.database).toEqual({ kind: 'sqlite', path: join(folder, 'other.db') });
  });
});

describe('loadConfig refuses bad settings with one line naming the setting', () => {
  it.each([
    [{ SERVICE_PORT: 'eighty' }, /^Invalid setting SERVICE_PORT \(from SERVICE_PORT\): must be a whole number from 0 to 65535, got "eighty"$/],
    [{ SERVICE_PORT: '70000' }, /SERVICE_PORT/],
    [{ SERVICE_API_ACTIVE: 'maybe' }, /^Invalid setting SERVICE_API_ACTIVE .*must be True or False/],
    [{ SERVICE_NETWORK: 'litecoin' }, /^Invalid setting SERVICE_NETWORK .*mainnet, testnet, testnet4, signet, regtest/],
    [{ SERVICE_DATABASE_URL: 'mysql://x' }, /^Invalid setting SERVICE_DATABASE_URL/],
    [{ SERVICE_TOKEN_MAX_LIFE: 'forever' }, /^Invalid setting SERVICE_TOKEN_MAX_LIFE/],
    [{ SERVICE_PASSWORD_MIN_CHARS: '0' }, /^Invalid setting SERVICE_PASSWORD_MIN_CHARS/],
    [{ SERVICE_RATE_LIMIT: '-1' }, /^Invalid setting SERVICE_RATE_LIMIT/],
    [{ SERVICE_LOG_LEVEL: 'loud' }, /^Invalid setting SERVICE_LOG_LEVEL/],
    [{ SERVICE_CORS_ORIGINS: 'not an origin' }, /^Invalid setting SERVICE_CORS_ORIGINS/],
    [{ SERVICE_BITCOIND_URL: 'ftp://node' }, /^Invalid setting SERVICE_BITCOIND_URL/],
    [{ SERVICE_BITCOIND_USER: 'rpc' }, /SERVICE_BITCOIND_USER \/ SERVICE_BITCOIND_PASSWORD: give both or neither/],
    [{ SERVICE_MAX_FEE_RATE: '0' }, /^Invalid setting SERVICE_MAX_FEE_RATE/],
    [{ SERVICE_WALLET_STATES_KEPT: '0' }, /^Invalid setting SERVICE_WALLET_STATES_KEPT \(from SERVICE_WALLET_STATES_KEPT\): must be a whole number from 1 to 1000000, got "0"$/],
    [{ SERVICE_WALLET_STATES_KEPT: 'many' }, /^Invalid setting SERVICE_WALLET_STATES_KEPT .*must be a whole number from 1 to 1000000/],
    [{ SERVICE_WALLET_STATES_BUDGET: '0' }, /^Invalid setting SERVICE_WALLET_STATES_BUDGET \(from SERVICE_WALLET_STATES_BUDGET\): must be a whole number from 1 to 1000000000, got "0"$/],
    [{ SERVICE_WALLET_STATES_BUDGET: '300 MB' }, /^Invalid setting SERVICE_WALLET_STATES_BUDGET .*must be a whole number from 1 to 1000000000, got "300 MB"$/],
    [{ SERVICE_WALLET_STATES_BUDGET: '1000000001' }, /^Invalid setting SERVICE_WALLET_STATES_BUDGET .*must be a whole number from 1 to 1000000000/],
    [{ SERVICE_WALLET_STATES_IDLE: '-1' }, /^Invalid setting SERVICE_WALLET_STATES_IDLE \(from SERVICE_WALLET_STATES_IDLE\): must be a number of seconds from 0 to 86400, got "-1"$/],
    [{ SERVICE_WALLET_STATES_IDLE: '10m' }, /^Invalid setting SERVICE_WALLET_STATES_IDLE .*must be a number of seconds from 0 to 86400, got "10m"$/],
    [{ SERVICE_WALLET_STATES_IDLE: '86401' }, /^Invalid setting SERVICE_WALLET_STATES_IDLE .*must be a number of seconds from 0 to 86400/],
    [{ SERVICE_BITCOIND_BLOCKS_FOLDER: 'blocks' }, /^Invalid setting SERVICE_BITCOIND_BLOCKS_FOLDER .*must be an absolute path \(or start with ~\/\), got "blocks"$/],
    [{ SERVICE_BITCOIND_BLOCKS_FOLDER: '/no/such/folder/blocks' }, /^Invalid setting SERVICE_BITCOIND_BLOCKS_FOLDER .*must be a folder that exists and can be read/],
    // Trusting every peer, or a hop count, would let any client name its own address.
    [{ SERVICE_TRUST_PROXY: 'true' }, /^Invalid setting SERVICE_TRUST_PROXY .*"true" is not an IP address or a range like 10\.0\.0\.0\/8/],
    [{ SERVICE_TRUST_PROXY: '1' }, /^Invalid setting SERVICE_TRUST_PROXY/],
    [{ SERVICE_TRUST_PROXY: '10.0.0.0/33' }, /^Invalid setting SERVICE_TRUST_PROXY .*"10\.0\.0\.0\/33"/],
    [{ SERVICE_TRUST_PROXY: '127.0.0.1, proxy.example' }, /^Invalid setting SERVICE_TRUST_PROXY .*"proxy\.example"/],
    [{ SERVICE_TRUST_PROXY: '::1/129' }, /^Invalid setting SERVICE_TRUST_PROXY/],
  ])('%j', (env, pattern) => {
    const error = errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env } }));
    expect(error.message).toMatch(pattern);
    expect(error.message).not.toContain('\n');
  });

  it('wallet_states_kept: 1000 by default, from a flag, the environment or config.json; a bad flag is named', () => {
    const load = (env: Record<string, string>, flags: string[] = []) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env }, flags });
    expect(load({}).walletStatesKept).toBe(1000);
    expect(load({ SERVICE_WALLET_STATES_KEPT: '1' }).walletStatesKept).toBe(1);
    expect(load({}, ['--wallet-states-kept', '250']).walletStatesKept).toBe(250);
    expect(errorOf(() => load({}, ['--wallet-states-kept', '-5'])).message).toBe('Invalid setting SERVICE_WALLET_STATES_KEPT (from --wallet-states-kept): must be a whole number from 1 to 1000000, got "-5"');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ wallet_states_kept: 30 }));
    expect(load({}).walletStatesKept).toBe(30);
  });

  it('wallet_states_shared_from: 5000 by default, from a flag, the environment or config.json; 0 turns it off; a bad value is named', () => {
    const load = (env: Record<string, string>, flags: string[] = []) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env }, flags });
    expect(load({}).walletStatesSharedFrom).toBe(5000);
    expect(load({ SERVICE_WALLET_STATES_SHARED_FROM: '0' }).walletStatesSharedFrom).toBe(0);
    expect(load({}, ['--wallet-states-shared-from', '20000']).walletStatesSharedFrom).toBe(20_000);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ wallet_states_shared_from: 30 }));
    expect(load({}).walletStatesSharedFrom).toBe(30);
    expect(errorOf(() => load({}, ['--wallet-states-shared-from', '-1'])).message).toBe('Invalid setting SERVICE_WALLET_STATES_SHARED_FROM (from --wallet-states-shared-from): must be a whole number from 0 to 1000000000, got "-1"');
  });

  it('wallet_states_budget and wallet_states_idle: 500000 and 600 s by default, from a flag, the environment or config.json; a bad flag is named', () => {
    const load = (env: Record<string, string>, flags: string[] = []) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env }, flags });
    expect(load({})).toMatchObject({ walletStatesBudget: 500_000, walletStatesIdleMs: 600_000 });
    expect(load({ SERVICE_WALLET_STATES_BUDGET: '1', SERVICE_WALLET_STATES_IDLE: '0' })).toMatchObject({ walletStatesBudget: 1, walletStatesIdleMs: 0 });
    expect(load({}, ['--wallet-states-budget', '2000000', '--wallet-states-idle', '0.25'])).toMatchObject({ walletStatesBudget: 2_000_000, walletStatesIdleMs: 250 });
    expect(errorOf(() => load({}, ['--wallet-states-budget', '-5'])).message).toBe('Invalid setting SERVICE_WALLET_STATES_BUDGET (from --wallet-states-budget): must be a whole number from 1 to 1000000000, got "-5"');
    expect(errorOf(() => load({}, ['--wallet-states-idle', 'forever'])).message).toBe('Invalid setting SERVICE_WALLET_STATES_IDLE (from --wallet-states-idle): must be a number of seconds from 0 to 86400, got "forever"');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ wallet_states_budget: 30, wallet_states_idle: 60 }));
    expect(load({})).toMatchObject({ walletStatesBudget: 30, walletStatesIdleMs: 60_000 });
  });

  it('never repeats a secret in the message', () => {
    const error = errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_JWT_KEY: 'short-secret' } }));
    expect(error.message).toBe('Invalid setting SERVICE_JWT_KEY (from SERVICE_JWT_KEY): must be at least 32 characters');
  });

  it('refuses unknown flags, a flag without value, unknown or malformed config-file settings', () => {
    expect(errorOf(() => loadConfig({ env: {}, flags: ['--prot', '1'] })).message).toBe('Unknown option --prot');
    expect(errorOf(() => loadConfig({ env: {}, flags: ['--port'] })).message).toBe('Option --port needs a value');
    writeFileSync(join(folder, 'config.json'), '{"prot": 1}');
    expect(errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder } })).message).toMatch(/unknown setting "prot"/);
    writeFileSync(join(folder, 'config.json'), '{"port": ');
    expect(errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder } })).message).toMatch(/is not valid JSON/);
    writeFileSync(join(folder, 'config.json'), '{"port": "x"}');
    expect(errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder } })).message).toMatch(/^Invalid setting SERVICE_PORT \(from "port" in .*config\.json\)/);
  });
});

describe('the chain source: Bitcoin Core or an Electrum server', () => {
  const load = (env: Record<string, string>, flags: string[] = []) => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, ...env }, flags });
  const fingerprint = 'AB:'.repeat(31) + 'AB';

  it('takes tcp:// and ssl:// servers, a pinned certificate fingerprint (colons or none) and a SOCKS5 proxy', () => {
    expect(load({}).electrum).toEqual({ url: undefined, tlsFingerprint: undefined, proxy: undefined });
    expect(load({ SERVICE_ELECTRUM_URL: 'tcp://127.0.0.1:50001' }).electrum.url).toBe('tcp://127.0.0.1:50001');
    expect(load({}, ['--electrum-url', 'SSL://Electrum.Example:50002']).electrum.url).toBe('ssl://electrum.example:50002');
    expect(load({ SERVICE_ELECTRUM_URL: 'tcp://[::1]:50001' }).electrum.url).toBe('tcp://[::1]:50001');
    const pinned = load({ SERVICE_ELECTRUM_URL: 'ssl://electrum.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: fingerprint, SERVICE_ELECTRUM_PROXY: 'socks5://127.0.0.1:9050' });
    expect(pinned.electrum).toEqual({ url: 'ssl://electrum.example:50002', tlsFingerprint: 'ab'.repeat(32), proxy: 'socks5://127.0.0.1:9050' });
    expect(load({ SERVICE_ELECTRUM_URL: 'ssl://x.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'CD'.repeat(32) }).electrum.tlsFingerprint).toBe('cd'.repeat(32));
    expect(load({ SERVICE_ELECTRUM_URL: 'tcp://abcdefghijklmnop.onion:50001', SERVICE_ELECTRUM_PROXY: 'socks5://tor:9050' }).electrum.proxy).toBe('socks5://tor:9050');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ electrum_url: 'ssl://electrum.example:50002', electrum_tls_fingerprint: fingerprint }));
    expect(load({}).electrum).toMatchObject({ url: 'ssl://electrum.example:50002', tlsFingerprint: 'ab'.repeat(32) });
  });

  it.each([
    [{ SERVICE_ELECTRUM_URL: 'electrum.example:50002' }, /^Invalid setting SERVICE_ELECTRUM_URL \(from SERVICE_ELECTRUM_URL\): must be an address like ssl:\/\/host:50002 or tcp:\/\/host:50001, got "electrum\.example:50002"$/],
    [{ SERVICE_ELECTRUM_URL: 'http://electrum.example:50002' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'ssl://electrum.example' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'ssl://electrum.example:0' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'ssl://electrum.example:70000' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'tcp://user:secret@electrum.example:50001' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'tcp://electrum.example:50001/path' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'tcp://999.1.1.1:50001' }, /^Invalid setting SERVICE_ELECTRUM_URL /],
    [{ SERVICE_ELECTRUM_URL: 'ssl://x.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'abcd' }, /^Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT .*64 hex digits/],
    [{ SERVICE_ELECTRUM_URL: 'ssl://x.example:50002', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'g'.repeat(64) }, /^Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT /],
    [{ SERVICE_ELECTRUM_URL: 'tcp://x.example:50001', SERVICE_ELECTRUM_TLS_FINGERPRINT: 'ab'.repeat(32) }, /^Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT .*only with an ssl:\/\/ SERVICE_ELECTRUM_URL/],
    [{ SERVICE_ELECTRUM_TLS_FINGERPRINT: 'ab'.repeat(32) }, /^Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT /],
    [{ SERVICE_ELECTRUM_URL: 'tcp://x.example:50001', SERVICE_ELECTRUM_PROXY: 'http://127.0.0.1:8080' }, /^Invalid setting SERVICE_ELECTRUM_PROXY .*socks5:\/\/127\.0\.0\.1:9050/],
    [{ SERVICE_ELECTRUM_PROXY: 'socks5://127.0.0.1:9050' }, /^Invalid setting SERVICE_ELECTRUM_PROXY .*only with SERVICE_ELECTRUM_URL/],
    [{ SERVICE_ELECTRUM_URL: 'tcp://x.example:50001', SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332', SERVICE_BITCOIND_COOKIE: '/tmp/.cookie' }, /^Invalid setting SERVICE_ELECTRUM_URL .*give SERVICE_BITCOIND_URL \(bitcoind_url\) or SERVICE_ELECTRUM_URL \(electrum_url\), not both$/],
    // Both without the node's credentials: the two sources are what is wrong, said first.
    [{ SERVICE_ELECTRUM_URL: 'tcp://x.example:50001', SERVICE_BITCOIND_URL: 'http://127.0.0.1:8332' }, /^Invalid setting SERVICE_ELECTRUM_URL .*not both$/],
  ])('%j', (env, pattern) => {
    const error = errorOf(() => load(env));
    expect(error.message).toMatch(pattern);
    expect(error.message).not.toContain('\n');
    expect(error.message).not.toContain('secret');
  });

  it('refuses both sources in config.json, and lets a flag or variable of one replace the other remembered there', () => {
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ bitcoind_url: 'http://127.0.0.1:8332', bitcoind_cookie: '/tmp/.cookie', electrum_url: 'tcp://127.0.0.1:50001' }));
    expect(errorOf(() => load({})).message).toMatch(/^Invalid setting SERVICE_ELECTRUM_URL .*not both$/);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ bitcoind_url: 'http://127.0.0.1:8332', bitcoind_cookie: '/tmp/.cookie' }));
    const electrum = load({ SERVICE_ELECTRUM_URL: 'tcp://127.0.0.1:50001' });
    expect([electrum.bitcoind.url, electrum.electrum.url]).toEqual([undefined, 'tcp://127.0.0.1:50001']);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ electrum_url: 'ssl://electrum.example:50002', electrum_tls_fingerprint: fingerprint, electrum_proxy: 'socks5://127.0.0.1:9050' }));
    const core = load({}, ['--bitcoind-url', 'http://127.0.0.1:8332', '--bitcoind-cookie', '/tmp/.cookie']);
    expect([core.bitcoind.url, core.electrum]).toEqual(['http://127.0.0.1:8332', { url: undefined, tlsFingerprint: undefined, proxy: undefined }]);
  });
});

describe('host and data folder', () => {
  it('takes IP addresses and host names as host, and refuses anything else naming SERVICE_HOST', () => {
    for (const [text, host] of [['0.0.0.0', '0.0.0.0'], ['::', '::'], ['[::1]', '::1'], ['localhost', 'localhost'], [' wcs.example.org ', 'wcs.example.org'], ['wcs_api', 'wcs_api']]) {
      expect(loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_HOST: text! } }).host).toBe(host);
    }
    for (const bad of ['http://wcs.example', '127.0.0.1:25441', 'not a host', '999.1.1.1', '-lead.example', 'a..b']) {
      expect(errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_HOST: bad } })).message).toMatch(/^Invalid setting SERVICE_HOST \(from SERVICE_HOST\): must be an IP address/);
    }
    expect(errorOf(() => loadConfig({ env: { SERVICE_DATA_FOLDER: folder }, flags: ['--host', 'a b'] })).message).toMatch(/^Invalid setting SERVICE_HOST \(from --host\)/);
  });

  it('takes a relative data folder from where npm was started (INIT_CWD), so npm start and npx wcs agree', () => {
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: 'data', INIT_CWD: folder } }).dataFolder).toBe(join(folder, 'data'));
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: 'data' } }).dataFolder).toBe(join(process.cwd(), 'data'));
    expect(loadConfig({ env: { SERVICE_DATA_FOLDER: '/srv/wcs', INIT_CWD: folder } }).dataFolder).toBe('/srv/wcs');
  });
});

describe('README configuration table', () => {
  it('names every setting with its config key, variable and flag', async () => {
    const { readFileSync } = await import('node:fs');
    const { SETTINGS, DATA_FOLDER_SETTING } = await import('../../../src/config.js');
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const rows = readme.split('\n').filter((line) => line.startsWith('| '));
    for (const s of SETTINGS) {
      expect(rows.some((r) => r.includes(`\`${s.key}\``) && r.includes(`\`${s.env}\``) && r.includes(`\`${s.flag}\``)), s.env).toBe(true);
    }
    expect(rows.some((r) => r.includes(DATA_FOLDER_SETTING.env) && r.includes(DATA_FOLDER_SETTING.flag))).toBe(true);
  });
});
