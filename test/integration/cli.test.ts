/** The `wcs` command as a subprocess: user management (password from stdin), config errors, serve + SIGTERM. */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { CLI_PATH, assertBuilt, runCli, startCliServer } from '../support/cli.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer } from '../support/server.js';
import { wallets } from './wallet-helpers.js';

let folder: string;
let env: Record<string, string>;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-cli-'));
  env = { SERVICE_DATA_FOLDER: folder, SERVICE_LOG_LEVEL: 'info' };
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The service creates the store (with the first-start admin) on its first start; stopped again at once. */
async function createStore(extra: Record<string, string> = { SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD }): Promise<string> {
  const server = await startCliServer({ ...env, SERVICE_PORT: '0', ...extra });
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  return server.output();
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('wcs user', () => {
  it('adds, lists, changes the password of and deletes users', async () => {
    await createStore();
    expect(await runCli(['user', 'add', 'alice'], env, 'alice-password\n')).toMatchObject({ code: 0, stdout: 'Added user alice\n' });
    expect(await runCli(['user', 'add', 'root', '--admin'], env, 'root-password\n')).toMatchObject({ code: 0, stdout: 'Added user root (admin)\n' });
    const list = await runCli(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 2))).toEqual([['admin', 'admin'], ['alice', 'user'], ['root', 'admin']]);

    expect(await runCli(['user', 'add', 'alice'], env, 'another-password\n')).toMatchObject({ code: 1, stderr: 'wcs: User alice already exists\n' });
    expect(await runCli(['user', 'add', 'shorty'], env, 'short\n')).toMatchObject({ code: 1, stderr: 'wcs: password must be at least 8 characters\n' });
    expect(await runCli(['user', 'add', 'bad name'], env, 'long-enough-password\n')).toMatchObject({ code: 1 });
    expect(await runCli(['user', 'add', 'nopass'], env, '')).toMatchObject({ code: 1, stderr: expect.stringContaining('No password on stdin') });

    expect(await runCli(['user', 'delete', 'alice'], env)).toMatchObject({ code: 0, stdout: "Deleted user alice, 0 token(s), 0 share(s) of other users' wallets\n" });
    expect(await runCli(['user', 'delete', 'alice'], env)).toMatchObject({ code: 1, stderr: 'wcs: User alice does not exist\n' });
    expect(await runCli(['user', 'delete', 'root'], env)).toMatchObject({ code: 0 });
    expect(await runCli(['user', 'delete', 'admin'], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('last admin') });
  });

  it('refuses to delete a user who owns wallets unless they are transferred or deleted, saying what was done', async () => {
    await createStore({ SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, SERVICE_NETWORK: 'regtest' });
    const regtest = { ...env, SERVICE_NETWORK: 'regtest' };
    for (const name of ['alice', 'bob']) expect((await runCli(['user', 'add', name], regtest, 'a-password-123\n')).code).toBe(0);
    const w = wallets.w_wpkh!;
    const importFor = (user: string, name: string) =>
      runCli(['wallet', 'import', '--user', user, '--name', name, '--recv-descriptor', w.recv_descriptor, '--change-descriptor', w.change_descriptor, '--birthday', '0'], regtest);
    expect((await importFor('alice', 'Alice hot')).code).toBe(0);

    const refused = await runCli(['user', 'delete', 'alice'], regtest);
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'wcs: User alice owns the wallet alice-hot: give --transfer-wallets-to USER or --delete-wallets; nothing was deleted\n' });
    expect((await runCli(['wallet', 'list', '--user', 'alice'], regtest)).stdout).toContain('alice-hot');
    expect(await runCli(['user', 'delete', 'alice', '--transfer-wallets-to', 'nobody'], regtest)).toMatchObject({ code: 1, stderr: 'wcs: User nobody does not exist\n' });
    expect(await runCli(['user', 'delete', 'alice', '--delete-wallets', '--transfer-wallets-to', 'bob'], regtest)).toMatchObject({ code: 2, stderr: expect.stringContaining('not both') });
    expect(await runCli(['user', 'list', '--delete-wallets'], regtest)).toMatchObject({ code: 2 });
    expect((await runCli(['user', 'list'], regtest)).stdout).toContain('alice');

    const moved = await runCli(['user', 'delete', 'alice', '--transfer-wallets-to', 'bob'], regtest);
    expect(moved).toMatchObject({ code: 0, stdout: "Deleted user alice, 0 token(s), 0 share(s) of other users' wallets; wallet(s) alice-hot now owned by bob\n" });
    expect((await runCli(['wallet', 'list', '--user', 'bob'], regtest)).stdout).toMatch(/^alice-hot\tAlice hot\t/);

    const deleted = await runCli(['user', 'delete', 'bob', '--delete-wallets'], regtest);
    expect(deleted).toMatchObject({ code: 0, stdout: "Deleted user bob, 0 token(s), 0 share(s) of other users' wallets, wallet(s) alice-hot with 0 PSBT(s) and their signatures\n" });
    expect((await runCli(['wallet', 'list', '--user', 'admin'], regtest)).stdout.trim()).toBe('No wallets');
  }, 60_000);

  it('refuses to work on a missing store: names the folder and how to point at another, and creates nothing', async () => {
    const missing = join(folder, 'missing');
    const elsewhere = { ...env, SERVICE_DATA_FOLDER: missing };
    for (const args of [['user', 'list'], ['user', 'add', 'alice'], ['wallet', 'list'], ['psbt', 'list', 'w']]) {
      const result = await runCli(args, elsewhere, 'a-password-123\n');
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toBe(
        `wcs: No store in the data folder ${missing}: start the service once to create it (npm start, or npx wcs serve), or point at another data folder ` +
          'with --data-folder DIR (or SERVICE_DATA_FOLDER), or at another database with --database (or SERVICE_DATABASE_URL)\n',
      );
    }
    expect(existsSync(missing)).toBe(false);
  });

  it('keeps the store, its WAL and SHM, backups and the first-start password file readable by the service user only', async () => {
    const data = join(folder, 'data');
    const inData = { ...env, SERVICE_DATA_FOLDER: data };
    const server = await startCliServer({ ...inData, SERVICE_PORT: '0' });
    try {
      expect(mode(data)).toBe('700');
      for (const file of ['service.sqlite', 'service.sqlite-wal', 'service.sqlite-shm', 'initial-admin-password', 'jwt-signing-key']) expect(mode(join(data, file)), file).toBe('600');
      expect(server.output()).toContain(`change it with: npx wcs user passwd admin --data-folder ${data}`);
      expect((await runCli(['backup', join(folder, 'snap.sqlite')], inData)).code).toBe(0);
      expect(mode(join(folder, 'snap.sqlite'))).toBe('600');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    // A store of an older version (0644) is narrowed on its next open.
    chmodSync(join(data, 'service.sqlite'), 0o644);
    expect((await runCli(['user', 'list'], inData)).code).toBe(0);
    expect(mode(join(data, 'service.sqlite'))).toBe('600');
    // A restore brings the snapshot in 0600.
    expect((await runCli(['restore', join(folder, 'snap.sqlite'), '--force'], inData)).code).toBe(0);
    expect(mode(join(data, 'service.sqlite'))).toBe('600');

    // The first-start password file is stale once the admin's password changes: removed.
    expect(readFileSync(join(data, 'initial-admin-password'), 'utf8').trim()).toMatch(/^\S{16,}$/);
    const changed = await runCli(['user', 'passwd', 'admin'], inData, 'brand-new-password\n');
    expect(changed).toMatchObject({ code: 0, stdout: 'Changed the password of admin; revoked 0 token(s)\nRemoved the first-start password file initial-admin-password\n' });
    expect(existsSync(join(data, 'initial-admin-password'))).toBe(false);
  });

  it('passwd revokes the user\'s tokens on the running server, and the new password works', async () => {
    const server = await startTestServer({ dataFolder: folder });
    try {
      const token = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'cli-revoked');
      expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
      const result = await runCli(['user', 'passwd', 'admin'], env, 'brand-new-password\n');
      expect(result).toMatchObject({ code: 0, stdout: 'Changed the password of admin; revoked 1 token(s)\n' });
      expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(401);
      expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', 'brand-new-password') } })).status).toBe(200);
      expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(401);
    } finally {
      await server.dispose();
    }
  });

  it('reports usage errors with exit code 2', async () => {
    expect(await runCli(['frobnicate'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'frobnicate'") });
    expect(await runCli(['user', 'add'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument 'NAME'") });
    expect(await runCli(['user', 'list', '--admin'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown option '--admin'") });
    expect((await runCli(['help'], env)).stdout).toContain('user passwd NAME');
    expect((await runCli(['--version'], env)).stdout).toBe('0.1.0\n');
  });

  it('answers --help for every command and subcommand with its own usage', async () => {
    const global = (await runCli(['--help'], env)).stdout;
    expect(global).toContain('Usage: wcs <command>');
    const cases: Array<[string[], string]> = [
      [['serve'], 'Usage: wcs serve [--replace-jwt-key]'],
      [['user'], 'Usage: wcs user <subcommand>'],
      [['user', 'add'], 'Usage: wcs user add NAME [--admin]'],
      [['user', 'passwd'], 'Usage: wcs user passwd NAME'],
      [['user', 'list'], 'Usage: wcs user list'],
      [['user', 'delete'], 'Usage: wcs user delete NAME [--transfer-wallets-to USER | --delete-wallets]'],
      [['backup'], 'Usage: wcs backup FILE [--force]'],
      [['restore'], 'Usage: wcs restore FILE [--force]'],
      [['wallet'], 'Usage: wcs wallet <subcommand>'],
      [['wallet', 'import'], 'Usage: wcs wallet import (--name NAME'],
      [['wallet', 'export'], 'Usage: wcs wallet export ALIAS --format'],
      [['wallet', 'list'], 'Usage: wcs wallet list [--user NAME]'],
      [['wallet', 'show'], 'Usage: wcs wallet show ALIAS'],
      [['wallet', 'delete'], 'Usage: wcs wallet delete ALIAS'],
      [['wallet', 'rescan'], 'Usage: wcs wallet rescan ALIAS'],
      [['labels'], 'Usage: wcs labels <subcommand>'],
      [['labels', 'export'], 'Usage: wcs labels export ALIAS'],
      [['labels', 'import'], 'Usage: wcs labels import ALIAS FILE'],
      [['psbt'], 'Usage: wcs psbt <subcommand>'],
      [['psbt', 'list'], 'Usage: wcs psbt list WALLET [--user NAME]'],
      [['psbt', 'create'], 'Usage: wcs psbt create WALLET --to ADDRESS=AMOUNT'],
      [['psbt', 'show'], 'Usage: wcs psbt show WALLET TXID'],
      [['psbt', 'sign-import'], 'Usage: wcs psbt sign-import WALLET TXID FILE'],
      [['psbt', 'broadcast'], 'Usage: wcs psbt broadcast WALLET TXID'],
      [['config', 'show'], 'Usage: wcs config show'],
      [['version'], 'Usage: wcs version'],
    ];
    for (const [words, usage] of cases) {
      for (const args of [[...words, '--help'], [...words, '-h'], ['help', ...words]]) {
        const result = await runCli(args, env);
        expect(result.code, args.join(' ')).toBe(0);
        expect(result.stdout.startsWith(usage), `${args.join(' ')}: ${result.stdout.slice(0, 80)}`).toBe(true);
        expect(result.stderr).toBe('');
      }
    }
    // Arguments before --help do not matter; an unknown command is a usage error.
    expect((await runCli(['user', 'delete', 'alice', '--help'], env)).stdout).toMatch(/^Usage: wcs user delete/);
    expect(await runCli(['frobnicate', '--help'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'frobnicate'") });
    expect(existsSync(join(folder, 'service.sqlite'))).toBe(false);
  }, 300_000); // about 90 runs of the CLI, a second or two each on a loaded machine
});

describe('wcs serve', () => {
  it('refuses a bad setting with one line naming it, before starting', async () => {
    const result = await runCli(['serve'], { ...env, SERVICE_PORT: 'eighty' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('wcs: Invalid setting SERVICE_PORT (from SERVICE_PORT): must be a whole number from 0 to 65535, got "eighty"\n');
    const flag = await runCli(['serve', '--network', 'dogecoin'], env);
    expect(flag.stderr).toMatch(/^wcs: Invalid setting SERVICE_NETWORK \(from --network\)/);
    const kept = await runCli(['serve', '--wallet-states-kept', '0'], env);
    expect(kept).toMatchObject({ code: 2, stderr: 'wcs: Invalid setting SERVICE_WALLET_STATES_KEPT (from --wallet-states-kept): must be a whole number from 1 to 1000000, got "0"\n' });
  });

  it('refuses two chain sources, or a malformed Electrum address, with one line naming the setting, before starting', async () => {
    const both = await runCli(['serve', '--electrum-url', 'tcp://127.0.0.1:50001'], { ...env, SERVICE_BITCOIND_URL: 'http://127.0.0.1:18443', SERVICE_BITCOIND_COOKIE: '/tmp/.cookie' });
    expect(both).toMatchObject({
      code: 2,
      stderr: 'wcs: Invalid setting SERVICE_ELECTRUM_URL (from --electrum-url): the chain is followed through Bitcoin Core or an Electrum server; give SERVICE_BITCOIND_URL (bitcoind_url) or SERVICE_ELECTRUM_URL (electrum_url), not both\n',
    });
    const malformed = await runCli(['serve'], { ...env, SERVICE_ELECTRUM_URL: 'electrum.example:50002' });
    expect(malformed).toMatchObject({ code: 2, stderr: 'wcs: Invalid setting SERVICE_ELECTRUM_URL (from SERVICE_ELECTRUM_URL): must be an address like ssl://host:50002 or tcp://host:50001, got "electrum.example:50002"\n' });
    const pinnedPlain = await runCli(['serve', '--electrum-url', 'tcp://127.0.0.1:50001', '--electrum-tls-fingerprint', 'ab'.repeat(32)], env);
    expect(pinnedPlain.code).toBe(2);
    expect(pinnedPlain.stderr).toMatch(/^wcs: Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT .*only with an ssl:\/\/ SERVICE_ELECTRUM_URL \(electrum_url\)\n$/);
    expect(existsSync(join(folder, 'service.sqlite'))).toBe(false);
  });

  it('refuses a bad host naming the setting: malformed, not resolving, or not an address of this machine', async () => {
    const malformed = await runCli(['serve'], { ...env, SERVICE_HOST: 'http://example.com:80' });
    expect(malformed).toMatchObject({ code: 2, stderr: 'wcs: Invalid setting SERVICE_HOST (from SERVICE_HOST): must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or a host name, without scheme or port, got "http://example.com:80"\n' });
    const unknown = await runCli(['serve', '--host', 'no-such-host.invalid', '--port', '0'], env);
    expect(unknown).toMatchObject({ code: 2, stderr: 'wcs: Invalid setting SERVICE_HOST (--host, "host" in config.json): "no-such-host.invalid" does not resolve to an address\n' });
    const foreign = await runCli(['serve', '--host', '192.0.2.1', '--port', '0'], env);
    expect(foreign).toMatchObject({ code: 2, stderr: 'wcs: Invalid setting SERVICE_HOST (--host, "host" in config.json): "192.0.2.1" is not an address of this machine\n' });
    // Refused before anything was created: no store, no first-start admin.
    expect(existsSync(join(folder, 'service.sqlite'))).toBe(false);
    expect(existsSync(join(folder, 'initial-admin-password'))).toBe(false);
  });

  it('says which SERVICE_* variables name no setting, with the setting a misspelt one likely meant, and goes on', async () => {
    const output = await createStore({ SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, SERVICE_TRUST_PROXIES: '10.0.0.1', SERVICE_OTHER_THING: 'x' });
    expect(output).toContain('wcs: SERVICE_OTHER_THING is not a setting and is ignored\n');
    expect(output).toContain('wcs: SERVICE_TRUST_PROXIES is not a setting and is ignored (did you mean SERVICE_TRUST_PROXY?)\n');
    const list = await runCli(['user', 'list'], { ...env, SERVICE_LOGLEVEL: 'debug' });
    expect(list).toMatchObject({ code: 0, stderr: 'wcs: SERVICE_LOGLEVEL is not a setting and is ignored (did you mean SERVICE_LOG_LEVEL?)\n' });
    expect(list.stdout).toMatch(/^admin\tadmin\t/);
  });

  it('says when config.json holds a secret that other users may read, and not once it is 0600 or holds none', async () => {
    await createStore();
    const file = join(folder, 'config.json');
    writeFileSync(file, JSON.stringify({ bitcoind_user: 'rpc', bitcoind_password: 'rpc-secret-password', log_level: 'info' }), { mode: 0o644 });
    chmodSync(file, 0o644);
    const open = await runCli(['user', 'list'], env);
    expect(open.code).toBe(0);
    expect(open.stderr).toBe(`wcs: ${file} holds secrets (bitcoind_password) and other users may read it (mode 644); run: chmod 600 ${file}\n`);
    expect(open.stderr).not.toContain('rpc-secret-password');
    chmodSync(file, 0o600);
    expect(await runCli(['user', 'list'], env)).toMatchObject({ code: 0, stderr: '' });
    writeFileSync(file, JSON.stringify({ log_level: 'info' }));
    chmodSync(file, 0o644);
    expect(await runCli(['user', 'list'], env)).toMatchObject({ code: 0, stderr: '' });
  });

  it('says in one plain line where it listens and whether the REST API and docs are on', async () => {
    const off = await createStore({ SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD });
    const offLine = off.split('\n').find((l) => l.startsWith('wcs: listening on '));
    expect(offLine).toMatch(
      new RegExp(`^wcs: listening on http://127\\.0\\.0\\.1:\\d+ \\(data folder ${folder}\\); REST API and docs off \\(every /api path answers 404\\); turn them on with SERVICE_API_ACTIVE=True or --api-active$`),
    );
    const on = await createStore({ SERVICE_API_ACTIVE: 'True' });
    const onLine = on.split('\n').find((l) => l.startsWith('wcs: listening on '));
    const port = /:(\d+) /.exec(onLine ?? '')?.[1];
    expect(onLine).toBe(`wcs: listening on http://127.0.0.1:${port} (data folder ${folder}); REST API on at http://127.0.0.1:${port}/api/v1alpha, docs at http://127.0.0.1:${port}/docs/api`);
  });

  it('finishes an in-flight request on SIGTERM, then closes the store and exits 0', async () => {
    const server = await startCliServer({ ...env, SERVICE_PORT: '0', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD });
    try {
      const body = JSON.stringify({ jwt_token_description: 'in-flight', jwt_token_life: '1 hours' });
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${server.url}/api/v1alpha/token`, {
          method: 'POST',
          headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        // Half the body now, SIGTERM, the rest afterwards: the request is in flight during shutdown.
        req.write(body.slice(0, 10));
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(10)), 300);
        }, 300);
      });
      const answered = await response;
      expect(answered.status).toBe(201);
      expect(JSON.parse(answered.body).message).toBe('Token generated');
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain('"msg":"shutting down"');
      expect(server.output()).toContain('"msg":"service stopped"');
      await expect(fetch(`${server.url}/healthz/live`)).rejects.toThrow();
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});

describe('settings remembered from serve', () => {
  it('serve records the settings given by environment or flag in config.json (0600, no secrets), says so once, and later commands use them', async () => {
    const first = await createStore({ SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_JWT_KEY: 'k'.repeat(40) });
    const file = join(folder, 'config.json');
    expect(first).toContain(`wcs: recorded the settings given to serve in ${file} (port, api_active, network, log_level), so that later commands use them; not recorded (secrets, or what needs one): admin_password, jwt_key\n`);
    expect(mode(file)).toBe('600');
    const recorded = readFileSync(file, 'utf8');
    expect(JSON.parse(recorded)).toEqual({ port: '0', api_active: 'True', network: 'regtest', log_level: 'info' });
    expect(recorded).not.toContain(TEST_ADMIN_PASSWORD);
    // Without SERVICE_NETWORK: the recorded regtest, not mainnet.
    expect(await runCli(['user', 'list'], { SERVICE_DATA_FOLDER: folder })).toMatchObject({ code: 0, stderr: '' });
    // config show says where each value comes from; a secret only as set.
    const shown = await runCli(['config', 'show'], { SERVICE_DATA_FOLDER: folder, SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, SERVICE_PORT: '8080' });
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain('network=regtest\t(config.json)\n');
    expect(shown.stdout).toContain('port=8080\t(environment)\n');
    expect(shown.stdout).toContain('admin_password=(secret, set)\t(environment)\n');
    expect(shown.stdout).toContain('max_fee_rate=1000\t(default)\n');
    expect(shown.stdout).not.toContain(TEST_ADMIN_PASSWORD);
    // The same start again changes nothing and says nothing about it.
    const again = await createStore({ SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_JWT_KEY: 'k'.repeat(40) });
    expect(again).not.toContain('wcs: recorded');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ port: '0', api_active: 'True', network: 'regtest', log_level: 'info' });
  });

  it('keeps a node address out of config.json while its password is not there, so later commands are not stopped by it', async () => {
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ admin_password: TEST_ADMIN_PASSWORD }), { mode: 0o600 });
    const output = await createStore({ SERVICE_BITCOIND_URL: 'http://127.0.0.1:9', SERVICE_BITCOIND_USER: 'rpc', SERVICE_BITCOIND_PASSWORD: 'rpc-secret-password', SERVICE_SYNC_INTERVAL: '0' });
    expect(output).toContain('not recorded (secrets, or what needs one): bitcoind_password, bitcoind_user, bitcoind_url\n');
    expect(JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8'))).toEqual({ admin_password: TEST_ADMIN_PASSWORD, port: '0', log_level: 'info', sync_interval: '0' });
    expect(await runCli(['user', 'list'], { SERVICE_DATA_FOLDER: folder })).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses a node address without credentials with exit 2, naming the settings to give', async () => {
    const result = await runCli(['serve'], { ...env, SERVICE_PORT: '0', SERVICE_BITCOIND_URL: 'http://127.0.0.1:18443' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid setting SERVICE_BITCOIND_URL');
    expect(result.stderr).toContain('bitcoind_cookie');
    expect(result.stderr).not.toContain('cookieFile');
    expect(existsSync(join(folder, 'config.json'))).toBe(false);
  });

  it("shows in each command's --help only the settings it uses", async () => {
    const userDelete = await runCli(['user', 'delete', '--help'], env);
    expect(userDelete.stdout).toContain('--data-folder');
    expect(userDelete.stdout).toContain('--transfer-wallets-to');
    expect(userDelete.stdout).not.toContain('--port');
    expect(userDelete.stdout).not.toContain('--bitcoind-url');
    expect(userDelete.stdout.length).toBeLessThan(2500);
    expect((await runCli(['wallet', 'rescan', '--help'], env)).stdout).toContain('--bitcoind-cookie');
    expect((await runCli(['serve', '--help'], env)).stdout).toContain('--trust-proxy');
  });
});

describe('wcs with SERVICE_DATABASE_URL=postgres://...', () => {
  it('manages users in PostgreSQL through the configured URL', async () => {
    const { TEST_DATABASE_URL, uniqueSchemaName, dropPostgresSchema } = await import('../support/stores.js');
    const pg = (await import('pg')).default;
    const schema = uniqueSchemaName();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    await client.end();
    try {
      const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const pgEnv = { ...env, SERVICE_DATABASE_URL: url };
      // An empty schema is no store: refused, the URL (a secret) not repeated, no table created.
      const refused = await runCli(['user', 'add', 'pguser', '--admin'], pgEnv, 'pg-user-password\n');
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^wcs: No store in the PostgreSQL database of SERVICE_DATABASE_URL \(--database\), which has no service tables yet: start the service once/) });
      expect(refused.stderr).not.toContain('wcs_test@');
      await createStore({ SERVICE_DATABASE_URL: url, SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD });
      expect(await runCli(['user', 'add', 'pguser', '--admin'], pgEnv, 'pg-user-password\n')).toMatchObject({ code: 0 });
      expect((await runCli(['user', 'list'], pgEnv)).stdout).toMatch(/^admin\tadmin\t.*\npguser\tadmin\t/);
      const check = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await check.connect();
      const rows = await check.query(`select name, is_admin from "${schema}".users order by name`);
      await check.end();
      expect(rows.rows).toEqual([{ name: 'admin', is_admin: 1 }, { name: 'pguser', is_admin: 1 }]);
    } finally {
      await dropPostgresSchema(schema);
    }
  });
});

describe('setting flags on the command line', () => {
  it('names a flag given without its value, even before another flag, and lets every True/False flag stand alone', async () => {
    const hint = 'Run "npx wcs --help" (or "npx wcs <command> --help") for usage.\n';
    expect(await runCli(['serve', '--host', '--port', '1'], env)).toEqual({ code: 2, stdout: '', stderr: `wcs: option '--host <VALUE>' argument missing\n${hint}` });
    expect(await runCli(['config', 'show', '--database'], env)).toEqual({ code: 2, stdout: '', stderr: `wcs: option '--database <VALUE>' argument missing\n${hint}` });
    const alone = await runCli(['config', 'show', '--web-active', '--port', '1', '--webhook-allow-private'], { ...env, SERVICE_WEB_ACTIVE: 'False' });
    expect(alone.code).toBe(0);
    expect(alone.stdout).toContain('\nport=1\t(flag)\n');
    expect(alone.stdout).toContain('\nweb_active=true\t(flag)\n');
    expect(alone.stdout).toContain('\nwebhook_allow_private=true\t(flag)\n');
    // A value that starts with -- is given after =; here it is refused as a host, naming the flag.
    const equals = await runCli(['config', 'show', '--host=--port'], env);
    expect(equals).toMatchObject({ code: 2, stderr: expect.stringMatching(/^wcs: Invalid setting SERVICE_HOST \(from --host\): .*got "--port"\n$/) });
  });

  it('keeps the web interface on with SERVICE_WEB_ACTIVE set to nothing, as without it', async () => {
    const server = await startCliServer({ ...env, SERVICE_PORT: '0', SERVICE_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD, SERVICE_WEB_ACTIVE: '' });
    try {
      const page = await fetch(`${server.url}/`, { redirect: 'manual' });
      expect(page.status).not.toBe(404);
      await page.arrayBuffer();
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });
});

describe('a closed output pipe', () => {
  /** Runs `wcs ...args` with its stdout pipe closed by the reader before anything is written (`wcs --help | head -0`). */
  function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
    assertBuilt();
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stderr }));
    });
  }

  it('ends every command quietly with status 0: help, version, config show, a store command', async () => {
    await createStore();
    for (const args of [['--help'], ['help', 'serve'], ['wallet', '--help'], ['version'], ['config', 'show'], ['user', 'list']]) {
      expect(await runIntoClosedPipe(args), args.join(' ')).toEqual({ code: 0, signal: null, stderr: '' });
    }
  });
});
