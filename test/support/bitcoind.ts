/**
 * Starts a real Bitcoin Core in regtest for a test file: its own temporary datadir, RPC on a free
 * loopback port (cookie authentication), no P2P listening, BIP158 filters. `stop()` asks the node to
 * stop over RPC, waits for it to exit and removes the datadir.
 *
 *   const node = await startBitcoind();
 *   await node.rpc.call('getblockchaininfo');
 *   await node.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BitcoindRpc, BitcoindRpcError } from './bitcoind-rpc.js';
import { HOW_TO_RUN, locateBitcoind } from './bitcoind-locate.js';
import { freePort } from './free-port.js';

export interface BitcoindNode {
  /** `http://127.0.0.1:<port>` */
  url: string;
  datadir: string;
  /** The `.cookie` file the node writes (what the service is given). */
  cookieFile: string;
  rpc: BitcoindRpc;
  /** The node's process (for its exit code in failure messages). */
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface StartBitcoindOptions {
  /** More `-name=value` arguments. */
  args?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function debugLogTail(datadir: string): string {
  const file = join(datadir, 'regtest', 'debug.log');
  if (!existsSync(file)) return '(no debug.log)';
  return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
}

/** Every node started by this process and not yet stopped: killed if the process exits first. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startBitcoind(options: StartBitcoindOptions = {}): Promise<BitcoindNode> {
  const located = locateBitcoind();
  if (!located.ok) throw new Error(`${located.reason}. Run the real-node tests with ${HOW_TO_RUN}`);
  let lastError: unknown;
  // A free port may be taken by someone else before bitcoind binds it: try again with another.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(located.path, await freePort(), options);
    } catch (error) {
      lastError = error;
      if (!(error instanceof PortInUse)) throw error;
    }
  }
  throw lastError;
}

class PortInUse extends Error {}

async function startOnce(binary: string, port: number, options: StartBitcoindOptions): Promise<BitcoindNode> {
  const datadir = mkdtempSync(join(tmpdir(), 'wcs-bitcoind-'));
  const args = [
    `-datadir=${datadir}`,
    '-regtest',
    '-server=1',
    '-listen=0',
    '-dnsseed=0',
    '-fixedseeds=0',
    '-rpcbind=127.0.0.1',
    '-rpcallowip=127.0.0.1',
    `-rpcport=${port}`,
    '-blockfilterindex=1',
    '-fallbackfee=0.0002',
    '-persistmempool=0',
    '-printtoconsole=0',
    ...(options.args ?? []),
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => live.delete(child));

  const cookieFile = join(datadir, 'regtest', '.cookie');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  let rpc: BitcoindRpc | undefined;
  const cleanUp = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(datadir, { recursive: true, force: true });
  };
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = debugLogTail(datadir);
      await cleanUp();
      const message = `bitcoind exited with ${child.exitCode ?? child.signalCode} before answering RPC: ${stderr.trim()}\n${log}`;
      if (/bind|address already in use/i.test(message)) throw new PortInUse(message);
      throw new Error(message);
    }
    if (Date.now() > deadline) {
      const log = debugLogTail(datadir);
      await cleanUp();
      throw new Error(`bitcoind did not answer RPC on ${url} within 30 s: ${stderr.trim()}\n${log}`);
    }
    if (!rpc && existsSync(cookieFile)) {
      const [user, password] = readFileSync(cookieFile, 'utf8').trim().split(':');
      if (user && password) rpc = new BitcoindRpc(url, user, password);
    }
    if (rpc) {
      try {
        await rpc.call('getblockchaininfo');
        break;
      } catch (error) {
        // -28: warming up; a refused connection: the RPC server is not listening yet.
        if (error instanceof BitcoindRpcError && error.code !== -28) throw error;
      }
    }
    await sleep(50);
  }

  let stopped: Promise<void> | undefined;
  return {
    url,
    datadir,
    cookieFile,
    rpc,
    child,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          try {
            await rpc.call('stop');
          } catch {
            child.kill('SIGTERM');
          }
          const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
          await exited;
          clearTimeout(timer);
        }
        rmSync(datadir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
