/** Runs the built `wcs` command (dist/cli/main.js) as a child process. `npm test` builds it first. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CLI_PATH = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first (npm test does)`);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `wcs ...args` with only the given environment (plus PATH), feeding `stdin`. */
export function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<CliResult> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Runs `wcs ...args` as runCli does, keeping stdout as bytes (a binary PSBT sent to a pipe). */
export function runCliBytes(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

/** Starts `wcs serve [...args]` and resolves once it logs "service started", with its URL. */
export function startCliServer(env: Record<string, string>, args: string[] = []): Promise<{ child: ChildProcess; url: string; output: () => string; exited: Promise<number | null> }> {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_PATH, 'serve', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 15_000);
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"service started"')) continue;
        const { port } = JSON.parse(line) as { port: number };
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${port}`, output: () => output, exited });
        return;
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
}
