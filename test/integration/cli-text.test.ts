/**
 * `wcs` as a subprocess: what it prints of stored names is escaped, old rows written before the input check
 * included, and a read-only command leaves the data folder as it found it (no jwt-signing-key).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_KEY_FILE } from '../../src/auth/signing-key.js';
import { runCli } from '../support/cli.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { startTestServer } from '../support/server.js';
import { nodeEnv, wallets } from './wallet-helpers.js';

const HOSTILE = 'Evil\u001b[2J\u001b]0;owned\u0007\r\nforged\trow\u0000\u202egpj.exe\u009b31m';
const RAW = ['\u001b', '\u0007', '\r', '\u0000', '\u202e', '\u009b'];

let node: RpcTestServer;
let folder: string;
/** The CLI's environment: no SERVICE_JWT_KEY, as an operator's shell that never set it. */
let env: Record<string, string>;

beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: 4 });
  folder = mkdtempSync(join(tmpdir(), 'wcs-cli-text-'));
  env = { ...nodeEnv(node), SERVICE_DATA_FOLDER: folder, SERVICE_ADMIN_PASSWORD: 'cli admin password' };
  // The service runs with the operator's key, so no key file exists; then the CLI is used without it.
  const first = await startTestServer({ dataFolder: folder, env: { ...env, SERVICE_JWT_KEY: 'k'.repeat(64) } });
  await first.stop();
  expect(existsSync(join(folder, SIGNING_KEY_FILE))).toBe(false);
}, 60_000);
afterAll(async () => {
  await node?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('wcs and the data folder', () => {
  it('user list and wallet list create no jwt-signing-key', async () => {
    const users = await runCli(['user', 'list'], env);
    expect(users.code, users.stderr).toBe(0);
    expect(users.stdout).toMatch(/^admin\tadmin\t/);
    expect((await runCli(['wallet', 'list'], env)).code).toBe(0);
    expect(existsSync(join(folder, SIGNING_KEY_FILE))).toBe(false);
  });
});

describe('wcs prints stored text escaped', () => {
  it('a wallet name stored before the check existed: one line, every control and bidi character escaped', async () => {
    const w = wallets.w_wpkh!;
    const imported = await runCli(['wallet', 'import', '--name', 'Plain', '--alias', 'plain', '--recv-descriptor', w.recv_descriptor, '--change-descriptor', w.change_descriptor, '--birthday', '0'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const db = new BetterSqlite3(join(folder, 'service.sqlite'));
    try {
      expect(db.prepare('update wallets set name = ? where alias = ?').run(HOSTILE, 'plain').changes).toBe(1);
    } finally {
      db.close();
    }
    const listed = await runCli(['wallet', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    for (const raw of RAW) expect(listed.stdout).not.toContain(raw);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.split('\t').slice(0, 2)).toEqual(['plain', 'Evil\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x0aforged\\x09row\\x00\\u202egpj.exe\\u009b31m']);

    const shown = await runCli(['wallet', 'show', 'plain'], env);
    expect(shown.code, shown.stderr).toBe(0);
    for (const raw of RAW) expect(shown.stdout).not.toContain(raw);
    expect(JSON.parse(shown.stdout).name).toBe(HOSTILE);
  });

  it('a name given on the command line with an escape sequence is refused, and the refusal prints it escaped', async () => {
    const w = wallets.w_wpkh!;
    const refused = await runCli(['wallet', 'import', '--name', 'Bad\u001b[31m', '--recv-descriptor', w.recv_descriptor, '--change-descriptor', w.change_descriptor, '--birthday', '0'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/must not contain control or bidirectional characters \(U\+001B/);
    const missing = await runCli(['wallet', 'show', 'x', '--user', 'ghost\u001b[2J'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ghost\\x1b[2J');
    expect(missing.stderr).not.toContain('\u001b');
  });
});
