/**
 * `wcs psbt ...` as a child process on the same data folder as a running service: the fixture wallets are
 * imported and synced over HTTP, then a PSBT is created, listed, exported as a binary file, signed outside,
 * imported and broadcast from the command line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parsePsbt, psbtToBase64, psbtTxid } from '../../src/core/psbt/index.js';
import { signAsCosigner } from '../unit/services/psbt-fixture-wallets.js';
import { spawn } from 'node:child_process';
import { CLI_PATH, runCli, runCliBytes } from '../support/cli.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { nodeEnv, timeline, wallets } from './wallet-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(75).address;

/** Runs the CLI with a pseudo-terminal as stdin/stdout/stderr; resolves with its exit code and everything it wrote. */
function runOnTerminal(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, CLI_PATH, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('wcs psbt', () => {
  let node: RpcTestServer;
  let server: TestServer;
  let folder: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    node = await startRpcTestServer({ snapshot: timeline.snapshots.length - 1 });
    folder = mkdtempSync(join(tmpdir(), 'wcs-psbt-cli-'));
    env = { SERVICE_DATA_FOLDER: folder, SERVICE_LOG_LEVEL: 'error', ...nodeEnv(node) };
    server = await startTestServer({ dataFolder: folder, env });
    const token = (await createToken(server, 'admin', server.adminPassword, 'cli')).jwt_token;
    for (const alias of ['w_wsh2of2']) {
      const w = wallets[alias]!;
      const made = await request(`${server.api}/wallets`, {
        method: 'POST',
        headers: { authorization: bearer(token) },
        json: { name: alias, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
      });
      expect(made.status, made.text).toBe(201);
    }
    expect((await server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await server?.running.close();
    await node?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('creates, lists, exports, imports signatures and broadcasts', async () => {
    const created = await runCli(['psbt', 'create', 'w_wsh2of2', '--user', 'admin', '--to', `${external}=125000sat`, '--fee-rate', '4', '--label', 'cli payment'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const [txid, feeLine, base64] = created.stdout.trim().split('\n');
    expect(txid).toMatch(/^[0-9a-f]{64}$/);
    expect(feeLine).toMatch(/^fee 0\.\d+ BTC \(\d+\.\d\d sat\/vB\)$/);
    expect(psbtToBase64(parsePsbt(base64!))).toBe(base64);

    const list = await runCli(['psbt', 'list', 'w_wsh2of2', '--user', 'admin'], env);
    expect(list).toMatchObject({ code: 0 });
    expect(list.stdout).toContain(`${txid}\t${external}=0.00125\t`);
    expect(list.stdout).toContain('\tsigs=0 of 2\n');

    const file = join(folder, 'export.psbt');
    expect(await runCli(['psbt', 'show', 'w_wsh2of2', txid!, '--user', 'admin', '--format', 'binary', '--out', file], env)).toMatchObject({ code: 0, stdout: `Wrote ${file}\n` });
    const exported = readFileSync(file);
    expect(exported.subarray(0, 5)).toEqual(Buffer.from('psbt\xff', 'latin1'));
    expect(exported.toString('base64')).toBe(base64);
    // To a pipe, binary goes to stdout as it is.
    const piped = await runCliBytes(['psbt', 'show', 'w_wsh2of2', txid!, '--format', 'binary'], env);
    expect(piped).toMatchObject({ code: 0, stderr: '' });
    expect(piped.stdout.equals(exported)).toBe(true);
    // To a terminal, it is refused.
    const terminal = await runOnTerminal(['psbt', 'show', 'w_wsh2of2', txid!, '--format', 'binary'], env);
    expect(terminal.code).toBe(2);
    expect(terminal.output).toContain('--format binary needs --out FILE, or stdout sent to a pipe or file');
    // The same PSBT as version 2 (BIP370): another file, the same unsigned transaction.
    const v2File = `${file}.v2`;
    expect(await runCli(['psbt', 'show', 'w_wsh2of2', txid!, '--format', 'binary', '--psbt-version', '2', '--out', v2File], env)).toMatchObject({ code: 0 });
    const v2 = parsePsbt(readFileSync(v2File));
    expect(v2.version).toBe(2);
    expect(psbtTxid(v2)).toBe(txid);
    expect((await runCli(['psbt', 'show', 'w_wsh2of2', txid!, '--psbt-version', '1'], env)).code).toBe(2);

    // Each cosigner signs the exported file on its own device; the copies come back as files.
    for (const [k, form] of [[0, 'binary'], [1, 'base64']] as const) {
      const signed = signAsCosigner(exported.toString('base64'), 'w_wsh2of2', k);
      const copy = join(folder, `signed-${k}.psbt`);
      writeFileSync(copy, form === 'binary' ? Buffer.from(signed, 'base64') : `${signed}\n`);
      const imported = await runCli(['psbt', 'sign-import', 'w_wsh2of2', txid!, copy, '--user', 'admin'], env);
      expect(imported).toMatchObject({ code: 0, stdout: `Merged; ${k + 1} of 2 signature(s) on every input\n` });
      // The same copy again adds nothing, and says so.
      const again = await runCli(['psbt', 'sign-import', 'w_wsh2of2', txid!, copy], env);
      expect(again).toMatchObject({ code: 0, stdout: `Added no signature: the copy holds none the stored PSBT lacks; ${k + 1} of 2 signature(s) on every input\n` });
    }
    expect((await runCli(['psbt', 'list', 'w_wsh2of2'], env)).stdout).toContain('\tsigs=2 of 2\n');

    const sent = await runCli(['psbt', 'broadcast', 'w_wsh2of2', txid!, '--user', 'admin'], env);
    expect(sent.code).toBe(0);
    expect(node.broadcasts.at(-1)!.outcome).toEqual({ txid: sent.stdout.trim() });
  }, 60_000);

  it('reports mistakes with a usage exit code, and refusals with their message', async () => {
    // --user defaults to admin, as for wallet commands.
    expect(await runCli(['psbt', 'list', 'w_wsh2of2'], env)).toEqual(await runCli(['psbt', 'list', 'w_wsh2of2', '--user', 'admin'], env));
    expect(await runCli(['psbt', 'create', 'w_wsh2of2', '--user', 'admin', '--to', 'nonsense'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('ADDRESS=AMOUNT') });
    expect(await runCli(['psbt', 'frobnicate', '--user', 'admin'], env)).toMatchObject({ code: 2 });
    expect(await runCli(['psbt', 'list', 'w_wsh2of2', '--user', 'nobody'], env)).toMatchObject({ code: 1, stderr: 'wcs: Wallet not found\n' });
    const poor = await runCli(['psbt', 'create', 'w_wsh2of2', '--user', 'admin', '--to', `${external}=500`, '--fee-rate', '2'], env);
    expect(poor).toMatchObject({ code: 1, stderr: expect.stringContaining('Insufficient funds') });
  }, 60_000);
});
