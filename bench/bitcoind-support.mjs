// A real Bitcoin Core (regtest) for the benchmarks: started on a given datadir (kept between runs when the
// caller wants a chain built once), RPC on a free loopback port with cookie authentication.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './support.mjs';

/** `BITCOIND`, else `../shared/bin/bitcoind` beside the repository. */
export function locateBitcoind(root) {
  const path = process.env.BITCOIND ?? resolve(root, '..', 'shared', 'bin', 'bitcoind');
  if (!existsSync(path)) throw new Error(`No bitcoind at ${path}: set BITCOIND to Bitcoin Core's bitcoind`);
  return path;
}

export class Rpc {
  constructor(url, cookieFile) {
    this.url = url;
    this.cookieFile = cookieFile;
  }

  get authorization() {
    return `Basic ${Buffer.from(readFileSync(this.cookieFile, 'utf8').trim()).toString('base64')}`;
  }

  async call(method, params = [], wallet) {
    const [answer] = await this.batch([{ method, params }], wallet);
    if (answer.error) throw new Error(`bitcoind ${method}: ${answer.error.message}`);
    return answer.result;
  }

  /** One JSON-RPC batch; answers in request order, each `{ result, error }`. */
  async batch(calls, wallet) {
    const endpoint = wallet === undefined ? this.url : `${this.url}/wallet/${encodeURIComponent(wallet)}`;
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: this.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '1.0', id, method: c.method, params: c.params }))),
    });
    const text = await response.text();
    let answers;
    try {
      answers = JSON.parse(text);
    } catch {
      throw new Error(`bitcoind: HTTP ${response.status} ${text.slice(0, 200)}`);
    }
    if (!Array.isArray(answers)) throw new Error(`bitcoind: ${answers?.error?.message ?? text.slice(0, 200)}`);
    return answers.sort((a, b) => a.id - b.id);
  }
}

/** Starts bitcoind on `datadir` (regtest, no P2P); resolves once RPC answers. */
export async function startBitcoind(binary, datadir, extraArgs = []) {
  const port = await freePort();
  const child = spawn(binary, [
    `-datadir=${datadir}`, '-regtest', '-server=1', '-listen=0', '-dnsseed=0', '-fixedseeds=0',
    '-rpcbind=127.0.0.1', '-rpcallowip=127.0.0.1', `-rpcport=${port}`, '-fallbackfee=0.0002',
    '-persistmempool=0', '-printtoconsole=0', '-rpcworkqueue=64', ...extraArgs,
  ], { stdio: 'ignore' });
  const rpc = new Rpc(`http://127.0.0.1:${port}`, join(datadir, 'regtest', '.cookie'));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`bitcoind exited with ${child.exitCode}`);
    try {
      if (existsSync(rpc.cookieFile)) {
        await rpc.call('getblockchaininfo');
        break;
      }
    } catch {
      // warming up
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    rpc,
    pid: child.pid,
    url: rpc.url,
    cookieFile: rpc.cookieFile,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      await rpc.call('stop').catch(() => child.kill('SIGKILL'));
      await exited;
    },
  };
}
