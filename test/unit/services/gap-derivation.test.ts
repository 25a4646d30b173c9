/**
 * New wallets' gaps derived on a worker thread (the built worker: `npm run build` first, as for the CLI tests):
 * the same scripts as derived in process, nothing parsed on the request thread, and a failed worker leaves the
 * derivation to the process and is said once. Workers that never answer or die are small entries written here.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { GapDerivation } from '../../../src/services/gap-derivation.js';
import { branchDeriver } from '../../../src/services/miniscript-wallet.js';
import { WalletScripts } from '../../../src/services/wallet-scripts.js';
import type { StoredWallet } from '../../../src/store/repositories.js';
import { storedFixtureWallet } from '../../support/fixtures.js';

const DIST = new URL('../../../dist/', import.meta.url);
const WORKER_ENTRY = new URL('services/gap-derivation-worker.js', DIST);

interface LogLine {
  level: string;
  message: string;
  details: Record<string, unknown> | undefined;
}

function builtDerivation(entry = WORKER_ENTRY, logs: LogLine[] = []): GapDerivation {
  if (!existsSync(fileURLToPath(WORKER_ENTRY))) throw new Error(`${fileURLToPath(WORKER_ENTRY)} is missing: run "npm run build" first (npm test does)`);
  const derivation = GapDerivation.start({ entry, log: (level, message, details) => logs.push({ level, message, details }) })!;
  started.push(derivation);
  return derivation;
}
const started: GapDerivation[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((d) => d.stop()));
});

/** Worker entries of the tests' own: one that never answers, and ones that die at the first request. */
const entries = mkdtempSync(join(tmpdir(), 'wcs-gap-entries-'));
afterAll(() => rmSync(entries, { recursive: true, force: true }));
function entry(name: string, onMessage: string): URL {
  const path = join(entries, `${name}.mjs`);
  writeFileSync(path, `import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => { ${onMessage} });\n`);
  return pathToFileURL(path);
}

function walletOf(name: 'w_wsh2of3' | 'w_wpkh'): StoredWallet {
  return storedFixtureWallet(name, { id: `w-${name}`, alias: name, name });
}

/** The branch's scripts from..from+count-1 (hex), derived in this process. */
function expected(wallet: StoredWallet, branch: 0 | 1, from: number, count: number): string[] {
  const descriptor = branch === 0 ? wallet.receiveDescriptor : wallet.changeDescriptor;
  return branchDeriver(descriptor, NETWORKS.regtest).deriveRange(from, count).map((o) => toHex(o.scriptPubKey));
}

describe('gap derivation on a worker thread', () => {
  for (const name of ['w_wsh2of3', 'w_wpkh'] as const) {
    it(`derives a new wallet's gap as the process would, without parsing its descriptors here (${name})`, async () => {
      const wallet = walletOf(name);
      const scripts = new WalletScripts(wallet, undefined, undefined, builtDerivation());
      await scripts.deriveInParts(0, 20);
      await scripts.deriveInParts(1, 20);
      expect(scripts.holdsDerivers).toBe(false); // the worker derived them: nothing parsed in this process
      expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
      expect(scripts.deriveHex(1, 0, 20)).toEqual(expected(wallet, 1, 0, 20));
      // The gap moving by a few scripts is derived here (a worker's answer comes later than they take).
      await scripts.deriveInParts(0, 23);
      expect(scripts.holdsDerivers).toBe(true);
      expect(scripts.deriveHex(0, 0, 23)).toEqual(expected(wallet, 0, 0, 23));
    });
  }

  it('derives any range of a branch, and answers requests in flight together', async () => {
    const wallet = walletOf('w_wsh2of3');
    const derivation = builtDerivation();
    const [first, far, change] = await Promise.all([
      derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 40),
      derivation.derive(wallet.receiveDescriptor, 'regtest', 1_000_000, 3),
      derivation.derive(wallet.changeDescriptor, 'regtest', 5, 10),
    ]);
    expect(first).toEqual(expected(wallet, 0, 0, 40));
    expect(far).toEqual(expected(wallet, 0, 1_000_000, 3));
    expect(change).toEqual(expected(wallet, 1, 5, 10));
  });

  it('asks the worker for a range prepared ahead once: a derivation of it waits for that answer', async () => {
    const wallet = walletOf('w_wsh2of3');
    const derivation = builtDerivation();
    const asked: Array<[number, number]> = [];
    const [derive, deriveAhead] = [derivation.derive.bind(derivation), derivation.deriveAhead.bind(derivation)];
    derivation.derive = (descriptor, network, from, count) => {
      asked.push([from, count]);
      return derive(descriptor, network, from, count);
    };
    derivation.deriveAhead = (descriptor, network, from, count) => {
      asked.push([from, count]);
      return deriveAhead(descriptor, network, from, count);
    };
    const scripts = new WalletScripts(wallet, undefined, undefined, derivation);
    scripts.prepare(0, 20);
    scripts.prepare(0, 20); // under way: not asked again
    scripts.prepare(1, 4); // a few scripts are derived here when needed, never asked for ahead
    expect(scripts.knownCount(0)).toBe(0); // nothing waited for
    await Promise.all([scripts.deriveInParts(0, 20), scripts.deriveInParts(0, 20)]);
    expect(asked).toEqual([[0, 20]]);
    expect(scripts.holdsDerivers).toBe(false);
    expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
  });

  it('hands the worker a range someone waits for before the ranges asked for ahead, and one hurried when waited for', async () => {
    const wallet = walletOf('w_wsh2of3');
    const derivation = builtDerivation();
    const answered: string[] = [];
    const ahead = Array.from({ length: 12 }, (_, k) => derivation.deriveAhead(wallet.receiveDescriptor, 'regtest', k * 40, 40));
    ahead.forEach((job, k) => void job.scripts.then(() => answered.push(`ahead ${k}`)));
    const now = derivation.derive(wallet.changeDescriptor, 'regtest', 0, 20).then((scripts) => (answered.push('now'), scripts));
    ahead[10]!.hurry(); // waited for now: before the other ranges asked for ahead, after the one someone waited for first
    expect(await now).toEqual(expected(wallet, 1, 0, 20));
    expect(await ahead[10]!.scripts).toEqual(expected(wallet, 0, 400, 40));
    await Promise.all(ahead.map((job) => job.scripts));
    // Two ranges at a time are with the worker: the first two asked for ahead were handed over before anyone waited.
    expect(answered.slice(0, 4)).toEqual(['ahead 0', 'ahead 1', 'now', 'ahead 10']);
    expect(answered.slice(4)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 11].map((k) => `ahead ${k}`));
  });

  it('runs below the priority of the thread answering requests (Linux)', async () => {
    // The nice value of each thread of this process (field 19 of its stat; fields after the name's parenthesis).
    const lowered = () =>
      readdirSync(`/proc/${process.pid}/task`)
        .map((tid) => readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8'))
        .filter((stat) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === getPriority() + 10).length;
    const before = lowered();
    const derivation = builtDerivation();
    await derivation.derive(walletOf('w_wpkh').receiveDescriptor, 'regtest', 0, 8); // the worker started
    expect(lowered()).toBe(before + 1);
  });

  it('keeps scripts derived here meanwhile, and takes only those past them', async () => {
    const wallet = walletOf('w_wsh2of3');
    const scripts = new WalletScripts(wallet, undefined, undefined, builtDerivation());
    const deriving = scripts.deriveInParts(0, 60);
    expect(scripts.deriveHex(0, 0, 5)).toEqual(expected(wallet, 0, 0, 5)); // derives ahead here: 32 scripts
    expect(scripts.knownCount(0)).toBe(32);
    await deriving;
    expect(scripts.knownCount(0)).toBe(60);
    expect(scripts.deriveHex(0, 0, 60)).toEqual(expected(wallet, 0, 0, 60));
  });

  it('refuses what cannot be derived with the reason, and the process derives once the worker is gone', async () => {
    const wallet = walletOf('w_wsh2of3');
    const logs: LogLine[] = [];
    const derivation = builtDerivation(WORKER_ENTRY, logs);
    await expect(derivation.derive('wpkh(not-a-key/0/*)', 'regtest', 0, 20)).rejects.toThrow(/key/i);
    await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 0)).resolves.toEqual([]);
    // One request's error is not the worker's failure: it goes on deriving, and nothing is logged.
    await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 8)).resolves.toEqual(expected(wallet, 0, 0, 8));

    await derivation.stop();
    await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 20)).rejects.toThrow('The derivation worker stopped');
    const scripts = new WalletScripts(wallet, undefined, undefined, derivation);
    await scripts.deriveInParts(0, 20);
    expect(scripts.holdsDerivers).toBe(true); // derived in process
    expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
    expect(logs).toEqual([]); // a stop asked for is no failure
  });

  for (const [name, onMessage, reason] of [
    ['throws', "throw new Error('worker heap exhausted')", 'worker heap exhausted'],
    ['exits', 'process.exit(3)', 'the worker exited with code 3'],
  ] as const) {
    it(`says once that a worker which ${name} is gone, and every later gap is derived in process (${name})`, async () => {
      const logs: LogLine[] = [];
      const derivation = builtDerivation(entry(name, onMessage), logs);
      for (const name of ['w_wsh2of3', 'w_wpkh', 'w_wsh2of3'] as const) {
        const wallet = { ...walletOf(name), id: `w-${name}-${Math.random()}` };
        const scripts = new WalletScripts(wallet, undefined, undefined, derivation);
        await scripts.deriveInParts(0, 20);
        await scripts.deriveInParts(1, 20);
        expect(scripts.holdsDerivers).toBe(true); // derived in process
        expect(scripts.deriveHex(0, 0, 20)).toEqual(expected(wallet, 0, 0, 20));
        expect(scripts.deriveHex(1, 0, 20)).toEqual(expected(wallet, 1, 0, 20));
      }
      expect(logs).toEqual([{ level: 'warn', message: "the gap derivation worker failed: new wallets' gaps are derived in process from now on", details: { reason } }]);
    });
  }

  it('rejects a derivation waiting when stop() comes, and leaves no thread: the process exits by itself', async () => {
    const logs: LogLine[] = [];
    const silent = entry('silent', '');
    const derivation = builtDerivation(silent, logs);
    const waiting = derivation.derive(walletOf('w_wpkh').receiveDescriptor, 'regtest', 0, 20);
    await derivation.stop();
    await expect(waiting).rejects.toThrow('The derivation worker stopped');
    expect(logs).toEqual([]);

    // A process whose only work is a derivation waiting on a worker that never answers: stop() lets it end.
    const script = `
      const { GapDerivation } = await import(${JSON.stringify(new URL('services/gap-derivation.js', DIST).href)});
      const derivation = GapDerivation.start({ entry: new URL(${JSON.stringify(silent.href)}), log: () => console.log('logged') });
      const settled = derivation.derive('wpkh(any)', 'regtest', 0, 20).then(() => 'resolved', (error) => 'rejected: ' + error.message);
      await derivation.stop();
      console.log(await settled);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, output }).toEqual({ code: 0, output: 'rejected: The derivation worker stopped\n' });
  });

  it('has no worker where no compiled entry is beside it (the sources, as tests run them)', () => {
    expect(GapDerivation.start()).toBeUndefined();
  });
});

describe("the built service's gap worker", () => {
  it("is stopped by the service's close: a derivation waiting then rejects, and nothing is logged as failed", async () => {
    if (!existsSync(fileURLToPath(WORKER_ENTRY))) throw new Error('dist is missing: run "npm run build" first (npm test does)');
    const { loadConfig } = (await import(new URL('config.js', DIST).href)) as typeof import('../../../src/config.js');
    const { createRuntime } = (await import(new URL('main.js', DIST).href)) as typeof import('../../../src/main.js');
    const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-gap-close-'));
    try {
      const logs: LogLine[] = [];
      const config = loadConfig({ env: { SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest' }, flags: [] });
      const runtime = await createRuntime(config, { chain: null, log: (level, message, details) => logs.push({ level, message, details }) });
      const derivation = runtime.services.gapDerivation!;
      const wallet = walletOf('w_wsh2of3');
      expect(await derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 20)).toEqual(expected(wallet, 0, 0, 20));
      // Seconds of work for the worker: still waiting when the close comes a few milliseconds later.
      const waiting = derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 20_000);
      await runtime.close();
      await expect(waiting).rejects.toThrow('The derivation worker stopped');
      await expect(derivation.derive(wallet.receiveDescriptor, 'regtest', 0, 20)).rejects.toThrow('The derivation worker stopped');
      expect(logs).toEqual([]);
    } finally {
      rmSync(dataFolder, { recursive: true, force: true });
    }
  });
});
