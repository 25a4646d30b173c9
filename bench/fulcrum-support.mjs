// A real Fulcrum (Electrum server) for the benchmarks, over a bench Bitcoin Core started with -txindex=1: its own
// database folder, TCP on a free loopback port, the node's cookie, the shortest poll of the node (0.5 s: the test
// node has no ZeroMQ). `startFulcrum` resolves once Fulcrum answers at the node's tip.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './support.mjs';

/** `FULCRUM`, else `../shared/bin/Fulcrum` beside the repository. */
export function locateFulcrum(root) {
  const path = process.env.FULCRUM ?? resolve(root, '..', 'shared', 'bin', 'Fulcrum');
  if (!existsSync(path)) throw new Error(`No Fulcrum at ${path}: set FULCRUM to an Electrum server's Fulcrum binary`);
  return path;
}

/** One Electrum request on a connection of its own. */
export function electrumRequest(port, method, params = []) {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = '';
    socket.once('error', reject);
    socket.on('data', (data) => {
      buffered += data.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end === -1) return;
      socket.destroy();
      const answer = JSON.parse(buffered.slice(0, end));
      if (answer.error) reject(new Error(`Electrum ${method}: ${answer.error.message ?? answer.error}`));
      else resolvePromise(answer.result);
    });
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })}\n`);
  });
}

const headerHash = (hex) => Buffer.from(createHash('sha256').update(createHash('sha256').update(Buffer.from(hex, 'hex')).digest()).digest()).reverse().toString('hex');

/** Starts Fulcrum over `node` (from bitcoind-support's startBitcoind); resolves once it is at the node's tip. */
export async function startFulcrum(binary, node) {
  const datadir = mkdtempSync(join(tmpdir(), 'wcs-bench-fulcrum-'));
  const port = await freePort();
  const child = spawn(binary, ['-D', datadir, '-b', new URL(node.url).host, '-K', node.cookieFile, '-t', `127.0.0.1:${port}`, '-T', '0.5'], { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  const fulcrum = {
    pid: child.pid,
    port,
    url: `tcp://127.0.0.1:${port}`,
    /** Resolves once Fulcrum's tip is the node's best block. */
    async atTip(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`Fulcrum exited with ${child.exitCode}`);
        try {
          const tip = await electrumRequest(port, 'blockchain.headers.subscribe');
          if (headerHash(tip.hex) === (await node.rpc.call('getbestblockhash'))) return;
        } catch {
          // listening only once its first indexing is done
        }
        if (Date.now() > deadline) throw new Error('Fulcrum did not reach the node\'s tip');
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(datadir, { recursive: true, force: true });
    },
  };
  try {
    await fulcrum.atTip();
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(datadir, { recursive: true, force: true });
    throw error;
  }
  return fulcrum;
}
