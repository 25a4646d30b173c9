/** `wcs wallet import --file`, `wcs wallet export`, `wcs labels export|import` as a subprocess on a data folder. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestServer } from '../support/server.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { nodeEnv } from './wallet-helpers.js';

const coldcardFile = new URL('../vectors/coldcard/firmware-export-p2wsh-myself.txt', import.meta.url).pathname;

let node: RpcTestServer;
let env: Record<string, string>;
let folder: string;

beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: 4 });
  folder = mkdtempSync(join(tmpdir(), 'wcs-files-cli-'));
  env = { ...nodeEnv(node), SERVICE_DATA_FOLDER: folder, SERVICE_ADMIN_PASSWORD: 'cli admin password' };
  const first = await startTestServer({ dataFolder: folder, env });
  await first.stop();
}, 60_000);
afterAll(async () => {
  await node?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('wcs wallet import --file / export, wcs labels', () => {
  it('imports a Coldcard file, exports every format to files that import back as the same wallet', async () => {
    const imported = await runCli(['wallet', 'import', '--file', coldcardFile, '--birthday', '0'], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Imported wallet cc-2-of-4 (CC-2-of-4): bech32, 2 of 4');
    const first = /First address: (\S+)/.exec(imported.stdout)![1];

    for (const format of ['descriptor', 'bsms', 'coldcard', 'specter', 'caravan']) {
      const out = join(folder, `export.${format}`);
      const exported = await runCli(['wallet', 'export', 'cc-2-of-4', '--format', format, '--out', out], env);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout.trim()).toBe(`Wrote the ${format} file of wallet cc-2-of-4 to ${out}`);
      const back = await runCli(['wallet', 'import', '--file', out, '--format', format, '--name', `Back ${format}`, '--alias', `back-${format}`, '--birthday', '0'], env);
      expect(back.code, back.stderr).toBe(0);
      expect(back.stdout).toContain(`First address: ${first}`);
    }
    const printed = await runCli(['wallet', 'export', 'cc-2-of-4', '--format', 'descriptor'], env);
    expect(printed.stdout).toMatch(/^wsh\(sortedmulti\(2,.*<0;1>\/\*.*\)#[a-z0-9]{8}\n$/);
  }, 120_000);

  it('names a faulty file or format, and a missing --format, with exit code 1 or 2', async () => {
    const bad = join(folder, 'bad.txt');
    writeFileSync(bad, readFileSync(coldcardFile, 'utf8').replace('Policy: 2 of 4', 'Policy: 5 of 4'));
    const refused = await runCli(['wallet', 'import', '--file', bad], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Threshold 5/);
    const missing = await runCli(['wallet', 'import', '--file', join(folder, 'nope.txt')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.txt');
    const noFormat = await runCli(['wallet', 'export', 'cc-2-of-4'], env);
    expect(noFormat.code).toBe(2);
  });

  it('exports labels to a file and imports a BIP329 file', async () => {
    const xpub = JSON.parse((await runCli(['wallet', 'show', 'cc-2-of-4'], env)).stdout).keys[0].xpub as string;
    const file = join(folder, 'labels.jsonl');
    writeFileSync(file, `${JSON.stringify({ type: 'xpub', ref: xpub, label: 'Coldcard A' })}\n${JSON.stringify({ type: 'tx', ref: 'ab'.repeat(32), label: 'not ours' })}\n`);
    const imported = await runCli(['labels', 'import', 'cc-2-of-4', file], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe("Imported 1 labels into cc-2-of-4; skipped 1 unknown references, 0 of unsupported types, 0 older than the wallet's");
    const out = join(folder, 'out.jsonl');
    const exported = await runCli(['labels', 'export', 'cc-2-of-4', '--out', out], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8').trim())).toMatchObject({ type: 'xpub', ref: xpub, label: 'Coldcard A' });
    writeFileSync(file, '{"type":"tx"}\n');
    const refused = await runCli(['labels', 'import', 'cc-2-of-4', file], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('line 1');
  });
});
