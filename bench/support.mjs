// Helpers shared by the benchmarks that start real server processes.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** `--name VALUE` from the command line (a string), else `fallback`. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** `--name N` from the command line as a number, else `fallback`. */
export function numberArg(name, fallback) {
  const value = arg(name);
  return value === undefined ? fallback : Number(value);
}

/** Clock ticks per second of /proc's CPU times: 100 on Linux unless `getconf CLK_TCK` says otherwise. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** The fields of /proc/<pid>/stat after the command name: index 0 is field 3 (the state). */
const statFields = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid) {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Minor page faults of a process so far (a first touch of memory the process never used), from /proc (Linux). */
export function minorFaults(pid) {
  return Number(statFields(pid)[7]);
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers 2xx; polls every 100 ms up to `attempts` times. */
export async function waitFor(url, attempts = 200) {
  for (let i = 0; i < attempts; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}
