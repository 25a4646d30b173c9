/** `wcs wallet ...` as a subprocess against a data folder and the test node. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { CLI_PATH, runCli } from '../support/cli.js';
import { startTestServer } from '../support/server.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { nodeEnv, timeline, wallets } from './wallet-helpers.js';

let node: RpcTestServer;
let env: Record<string, string>;
let folder: string;

beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: 4 });
  folder = mkdtempSync(join(tmpdir(), 'wcs-wallet-cli-'));
  env = { ...nodeEnv(node), SERVICE_DATA_FOLDER: folder, SERVICE_ADMIN_PASSWORD: 'cli admin password' };
  // The service creates the store and its first admin; wallet commands then work on that store.
  const first = await startTestServer({ dataFolder: folder, env });
  await first.stop();
  const added = await runCli(['user', 'add', 'erin'], env, 'a-password-123\n');
  expect(added.code, added.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await node?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Runs the CLI with a pseudo-terminal as stdin/stdout/stderr; resolves with everything it wrote. */
function runOnTerminal(args: string[], env: Record<string, string>): Promise<string> {
  const command = [process.execPath, CLI_PATH, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`exit ${code}: ${output}`))));
  });
}

describe('wcs wallet', () => {
  it('imports, lists, shows, rescans with a progress bar and deletes', async () => {
    const w = wallets.w_wpkh!;
    const imported = await runCli(['wallet', 'import', '--user', 'erin', '--name', 'Erin hot', '--recv-descriptor', w.recv_descriptor, '--change-descriptor', w.change_descriptor, '--birthday', '0'], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Imported wallet erin-hot (Erin hot): bech32, 1 of 1');

    const listed = await runCli(['wallet', 'list', '--user', 'erin'], env);
    expect(listed.stdout.trim()).toBe('erin-hot\tErin hot\tbech32\t1-of-1\t0.00000000 BTC');
    expect((await runCli(['wallet', 'list', '--user', 'admin'], env)).stdout.trim()).toBe('No wallets');

    const rescanned = await runCli(['wallet', 'rescan', 'erin-hot', '--user', 'erin', '--from', '0'], env);
    expect(rescanned.code, rescanned.stderr).toBe(0);
    expect(rescanned.stdout).toContain('Rescanned wallet erin-hot from height 0');
    expect(rescanned.stderr).toMatch(/\[#{30}\] 100\.0% done/);
    // Not a terminal (a pipe): plain lines, no carriage-return animation.
    expect(rescanned.stderr).not.toContain('\r');
    expect(rescanned.stderr.endsWith('done\n')).toBe(true);

    // On a terminal (util-linux `script` gives the command one): the bar is redrawn in place with \r.
    const onTerminal = await runOnTerminal(['wallet', 'rescan', 'erin-hot', '--user', 'erin', '--from', '0'], env);
    expect(onTerminal).toMatch(/\r\[#{30}\] 100\.0% done/);

    const shown = await runCli(['wallet', 'show', 'erin-hot', '--user', 'erin'], env);
    const details = JSON.parse(shown.stdout);
    const expected = timeline.snapshots[4].expected.w_wpkh;
    expect(details.balance.confirmed).toBe(expected.balances.trusted);
    expect(details.utxo).toHaveLength(expected.unspent.length);
    expect(details.scan).toBeNull();

    const hidden = await runCli(['wallet', 'show', 'erin-hot', '--user', 'admin'], env);
    expect(hidden.code).toBe(1);
    expect(hidden.stderr).toBe('wcs: Wallet not found\n');

    expect((await runCli(['wallet', 'delete', 'erin-hot', '--user', 'erin'], env)).stdout).toContain('Deleted wallet erin-hot');
    expect((await runCli(['wallet', 'list', '--user', 'erin'], env)).stdout.trim()).toBe('No wallets');
  }, 120_000);

  it('reports bad input with a clear message and exit code', async () => {
    const bad = await runCli(['wallet', 'import', '--name', 'x', '--descriptor', 'wpkh(nope)', '--birthday', '0'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^wcs: Invalid descriptor: /);
    const usage = await runCli(['wallet', 'frobnicate'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown command 'frobnicate'");
  });

  it('rescan without node settings says the running service scans the wallet, and that the command had no node', async () => {
    const w = wallets.w_wpkh!;
    const imported = await runCli(['wallet', 'import', '--user', 'erin', '--name', 'No node here', '--recv-descriptor', w.recv_descriptor, '--change-descriptor', w.change_descriptor, '--birthday', '0'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const rescan = await runCli(['wallet', 'rescan', 'no-node-here', '--user', 'erin'], { SERVICE_DATA_FOLDER: folder, SERVICE_NETWORK: 'regtest' });
    expect(rescan).toMatchObject({
      code: 0,
      stdout: 'Wallet no-node-here will be scanned again from height 0 by the running service on its next sync pass; this command was given no node settings (bitcoind_url) to scan it itself\n',
    });
    expect((await runCli(['wallet', 'delete', 'no-node-here', '--user', 'erin'], env)).code).toBe(0);
  });
});
