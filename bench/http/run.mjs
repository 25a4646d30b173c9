// HTTP benchmark: requests/s and p99 latency of token-authenticated reads on the real server
// (`wcs serve` as a child process, SQLite, request logging on) against a bare Fastify hello-world,
// all on loopback, each target measured several times in alternation; medians are reported.
// Usage: npm run build && node bench/http/run.mjs [--duration 5] [--rounds 3] [--processes 3] [--connections 10] [--no-pin]
// Each of `processes` pairs of fresh server processes is measured in turn: one process of a build may cost
// several µs per request more than the next (JIT and memory layout), the bare server's as much as the service's,
// so a ratio from one pair of processes is partly chance.
// With two cores or more (and `taskset`), both servers run on the last core and the load generator (this
// process) on the others, so that the load generator never takes CPU from the server it measures; `--no-pin`
// lets the kernel place them.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, freePort, numberArg, waitFor } from '../support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const DURATION = Math.min(numberArg('duration', 5), 30);
const ROUNDS = Math.min(numberArg('rounds', 3), 9);
const PROCESSES = Math.min(numberArg('processes', 3), 9);
const CONNECTIONS = numberArg('connections', 10);
const PASSWORD = 'bench-admin-password';
const SERVER_CORE = cpus().length - 1;
const PINNED = !process.argv.includes('--no-pin') && SERVER_CORE >= 1 && spawnSync('taskset', ['-a', '-p', '-c', `0-${SERVER_CORE - 1}`, String(process.pid)]).status === 0;

function start(args, env) {
  const [command, ...rest] = PINNED ? ['taskset', '-c', String(SERVER_CORE), process.execPath, ...args] : [process.execPath, ...args];
  return spawn(command, rest, { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

function stop(child) {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** CPU time (user + system) a process has used, in µs; undefined without /proc. */
const cpuMicros = (pid) => (existsSync(`/proc/${pid}/stat`) ? cpuSeconds(pid) * 1e6 : undefined);

/** Requests/s and p99 seen by the load generator, and the server's own CPU per request (steadier on a shared machine). */
async function measure(url, headers, server) {
  const cpuBefore = cpuMicros(server.pid);
  const result = await new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION, pipelining: 1 }, (error, answer) => (error ? reject(error) : resolve(answer)));
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuAfter = cpuMicros(server.pid);
  const cpuPerRequest = cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / result.requests.total;
  return { rps: result.requests.average, p99: result.latency.p99, cpuPerRequest };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const TARGETS = [
  { name: 'bare Fastify GET / (reference)', server: 'bare', path: '/', authenticated: false },
  { name: 'GET /api/v1alpha/liveness (Bearer)', server: 'service', path: '/api/v1alpha/liveness', authenticated: true },
  { name: 'GET /api/v1alpha/service (Bearer, admin)', server: 'service', path: '/api/v1alpha/service', authenticated: true },
  { name: 'GET /healthz/live (no auth)', server: 'service', path: '/healthz/live', authenticated: false },
];

/**
 * One fresh bare server and one fresh service, each target measured `ROUNDS` times in alternation.
 * Returns, per target, the samples of this pair of processes.
 */
async function measureOnePair() {
  const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-'));
  const [barePort, servicePort] = [await freePort(), await freePort()];
  const servers = {
    bare: start([join(here, 'bare-server.mjs'), String(barePort)], {}),
    service: start([join(root, 'dist', 'cli', 'main.js'), 'serve'], {
      SERVICE_DATA_FOLDER: dataFolder,
      SERVICE_PORT: String(servicePort),
      SERVICE_API_ACTIVE: 'True',
      SERVICE_USER_REQUEST_RATE: '0', // the benchmark measures throughput, not the per-user limit
      SERVICE_ADMIN_PASSWORD: PASSWORD,
    }),
  };
  try {
    const bases = { bare: `http://127.0.0.1:${barePort}`, service: `http://127.0.0.1:${servicePort}` };
    await Promise.all([waitFor(`${bases.bare}/`), waitFor(`${bases.service}/healthz/live`)]);
    const created = await fetch(`${bases.service}/api/v1alpha/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jwt_token_description: 'bench', jwt_token_life: '1 hours' }),
    }).then((r) => r.json());
    const auth = { authorization: `Bearer ${created.jwt_token}` };
    const runs = TARGETS.map((t) => ({ ...t, url: `${bases[t.server]}${t.path}`, headers: t.authenticated ? auth : {}, process: servers[t.server] }));
    // Warm-up (JIT, statement caches), not counted.
    for (const t of runs) await new Promise((r) => autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: 1 }, r));
    const samples = new Map(runs.map((t) => [t.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of runs) samples.get(t.name).push(await measure(t.url, t.headers, t.process));
    }
    return samples;
  } finally {
    await Promise.all([stop(servers.bare), stop(servers.service)]);
    rmSync(dataFolder, { recursive: true, force: true });
  }
}

const round2 = (x) => Math.round(x * 100) / 100;
const round1 = (x) => Math.round(x * 10) / 10;
const pairs = [];
for (let i = 0; i < PROCESSES; i++) pairs.push(await measureOnePair());

/** The median, or undefined when a value is missing (no CPU figures without `/proc`). */
const medianOfAll = (values) => (values.includes(undefined) ? undefined : median(values));
/** Per target: the median of each process's samples, then the median over the processes. */
const perProcess = (name, field) => pairs.map((samples) => medianOfAll(samples.get(name).map((s) => s[field])));
const overProcesses = (name, field) => medianOfAll(perProcess(name, field));
const bareName = TARGETS[0].name;
const bareRps = overProcesses(bareName, 'rps');
const bareCpu = overProcesses(bareName, 'cpuPerRequest');
const rows = TARGETS.map((t) => {
  const rps = overProcesses(t.name, 'rps');
  const cpuByProcess = perProcess(t.name, 'cpuPerRequest');
  const cpu = medianOfAll(cpuByProcess);
  return {
    target: t.name,
    rps: Math.round(rps),
    p99_ms: overProcesses(t.name, 'p99'),
    ratio_to_bare: round2(rps / bareRps),
    // The server's own CPU per request (median over processes, and each process's), and the bare
    // server's median divided by it: the rate one core would give, free of the load generator's limit.
    server_cpu_us: cpu === undefined ? null : round1(cpu),
    server_cpu_us_per_process: cpuByProcess.includes(undefined) ? null : cpuByProcess.map(round1).join(' / '),
    cpu_ratio_to_bare: cpu === undefined || bareCpu === undefined ? null : round2(bareCpu / cpu),
  };
});
const placement = PINNED ? `servers on core ${SERVER_CORE}, load generator on cores 0-${SERVER_CORE - 1}` : 'not pinned';
const report = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, placement, duration_s: DURATION, rounds: ROUNDS, processes: PROCESSES, connections: CONNECTIONS, rows };
console.log(`${placement}; ${PROCESSES} processes of each server, ${ROUNDS} rounds of ${DURATION} s each`);
console.table(rows);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'http.json'), `${JSON.stringify(report, null, 2)}\n`);
