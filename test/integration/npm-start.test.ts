/**
 * The README's start command as a supervisor or container runs it: `npm start` (after `npm ci`, which
 * builds once through the `prepare` script). It starts without compiling, and SIGTERM sent to the npm
 * process stops the service cleanly: the port closes and no process of it remains.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-npm-start-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** Shell lines of the fenced code blocks of a Markdown file. */
function codeLines(file: string): string[] {
  const blocks = readFileSync(join(ROOT, file), 'utf8').split('```').filter((_, i) => i % 2 === 1);
  return blocks.flatMap((b) => b.split('\n').slice(1));
}

/** Every descendant of `pid` (from /proc: Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name may hold spaces and parentheses: the parent pid is the second field after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, p] of parents) {
      if (p !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('wcs after the README\'s commands', () => {
  it('runs as npx wcs from the project folder (the package bin), without a global install', () => {
    assertBuilt();
    const version = execFileSync('npx', ['--offline', 'wcs', 'version'], { cwd: join(ROOT, 'src'), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? folder }, encoding: 'utf8' });
    expect(version.trim()).toBe('0.1.0');
  });

  it('the README and the operations guide show only forms that work there (npx wcs, npm start)', () => {
    for (const file of ['README.md', 'docs/operations.md']) {
      for (const line of codeLines(file)) {
        // A bare `wcs` command (not on the PATH), or the built file run by hand.
        expect(line, `${file}: ${line}`).not.toMatch(/(^|[;&|(]\s*|\s)wcs\s+(serve|user|wallet|psbt|backup|restore|help|version)\b(?<!npx wcs\s+\w+)/);
        expect(line, `${file}: ${line}`).not.toContain('node dist/cli/main.js');
      }
    }
  });
});

describe('npm start (the README start command)', () => {
  it('builds at install, not at start', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.prepare).toBe('npm run build');
    expect(scripts.prestart).toBeUndefined();
    expect(scripts.start).not.toMatch(/build|tsc/);
  });

  it('stops the service on SIGTERM to the npm process: port closed, no process left', async () => {
    assertBuilt();
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: folder, SERVICE_DATA_FOLDER: join(folder, 'data'), SERVICE_API_ACTIVE: 'True', SERVICE_PORT: '0', SERVICE_ADMIN_PASSWORD: 'npm-start-password' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    let processes: number[] = [];
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not start the service: ${output}`)), 30_000);
        const look = () => {
          const found = /wcs: listening on (http:\/\/[^ ]+)/.exec(output);
          if (!found) return;
          clearTimeout(timer);
          resolve(found[1]!);
        };
        npm.stdout.on('data', look);
        npm.stderr.on('data', look);
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`npm start exited with ${code}: ${output}`));
        });
      });
      expect(output).not.toContain('tsc');
      expect((await fetch(`${url}/healthz/live`)).status).toBe(200);
      processes = descendants(npm.pid!);
      expect(processes.length).toBeGreaterThan(0);

      npm.kill('SIGTERM');
      expect(await exited).toBe(0);
      await expect(fetch(`${url}/healthz/live`)).rejects.toThrow();
      // Give the kernel a moment to reap, then nothing the npm process started may be running.
      const deadline = Date.now() + 5_000;
      while (processes.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(processes.filter(alive)).toEqual([]);
      expect(output).toContain('"msg":"service stopped"');
    } finally {
      // An orphan is no longer npm's descendant: kill what was seen running under it.
      for (const pid of [npm.pid!, ...processes, ...descendants(npm.pid!)]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});
