/**
 * Starts a real Fulcrum (an Electrum server) over a test Bitcoin Core: its own temporary database folder, TCP on
 * a free loopback port, the node's cookie for RPC, a fast poll of the node (0.5 s: the node has no ZeroMQ).
 * `start` resolves once Fulcrum answers the Electrum protocol at the node's tip. The node must run with
 * `-txindex=1` (`startBitcoind({ args: FULCRUM_NODE_ARGS })`).
 *
 *   const node = await startBitcoind({ args: FULCRUM_NODE_ARGS });
 *   const fulcrum = await startFulcrum(node);
 *   await fulcrum.request('blockchain.headers.subscribe', []);
 *   await fulcrum.waitForTip();      // after mining or a reorg
 *   await fulcrum.kill();            // kill -9, for fault tests
 *   await fulcrum.restart();         // same database folder and port
 *   await fulcrum.stop();            // SIGTERM, waits, removes the folder
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import type { BitcoindNode } from './bitcoind.js';
import { HOW_TO_RUN_FULCRUM, locateFulcrum } from './fulcrum-locate.js';
import { freePort } from './free-port.js';

/** What the node under Fulcrum needs besides startBitcoind's defaults. */
export const FULCRUM_NODE_ARGS = ['-txindex=1'];

export interface FulcrumServer {
  /** `tcp://127.0.0.1:<port>`: the service's `electrum_url`. */
  url: string;
  port: number;
  datadir: string;
  /** The running process (replaced by `restart`). */
  readonly child: ChildProcess;
  /** One Electrum request on a connection of its own; an error answer rejects with the server's message. */
  request<T = any>(method: string, params: unknown[]): Promise<T>;
  /** Resolves when Fulcrum's tip is the node's best block (height and hash). */
  waitForTip(timeoutMs?: number): Promise<void>;
  /** kill -9: no clean shutdown, the database folder stays for `restart`. */
  kill(): Promise<void>;
  /** Starts Fulcrum again on the same folder and port (after `kill` or `stop({ keepData: true })`), until it is at the tip. */
  restart(): Promise<void>;
  /** SIGTERM (a clean shutdown), waits for the exit; removes the folder unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** The last lines Fulcrum printed (for failure messages). */
  logTail(): string;
}

export interface StartFulcrumOptions {
  /** Seconds between Fulcrum's polls of the node (0.5 to 30). */
  pollSeconds?: number;
  /** More command-line arguments. */
  args?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every Fulcrum started by this process and not yet stopped: killed if the process exits first. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** An 80-byte block header's hash as block explorers and Core write it (double SHA-256, byte-reversed). */
export function headerHash(headerHex: string): string {
  const hash = sha256(sha256(Buffer.from(headerHex, 'hex')));
  return Buffer.from(hash).reverse().toString('hex');
}

/** One Electrum JSON-RPC request over a fresh TCP connection (newline-delimited JSON). */
export function electrumRequest<T = any>(port: number, method: string, params: unknown[], timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = '';
    const timer = setTimeout(() => finish(new Error(`Electrum ${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error: Error | null, value?: T) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value as T);
    };
    socket.once('error', (error) => finish(error));
    socket.once('close', () => finish(new Error(`Electrum ${method}: connection closed before an answer`)));
    socket.on('data', (data) => {
      buffered += data.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end === -1) return;
      const answer = JSON.parse(buffered.slice(0, end)) as { result?: T; error?: { message?: string } | string };
      if (answer.error) finish(new Error(`Electrum ${method}: ${typeof answer.error === 'string' ? answer.error : answer.error.message}`));
      else finish(null, answer.result);
    });
    socket.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n');
  });
}

export async function startFulcrum(node: BitcoindNode, options: StartFulcrumOptions = {}): Promise<FulcrumServer> {
  const located = locateFulcrum();
  if (!located.ok) throw new Error(`${located.reason}. Run the Electrum tests with ${HOW_TO_RUN_FULCRUM}`);
  const { txindex } = await node.rpc.call<Record<string, unknown>>('getindexinfo', ['txindex']);
  if (!txindex) throw new Error('startFulcrum: the node runs without -txindex=1 (start it with FULCRUM_NODE_ARGS)');

  const datadir = mkdtempSync(join(tmpdir(), 'wcs-fulcrum-'));
  const nodeAddress = new URL(node.url).host;
  let port = await freePort();
  let child!: ChildProcess;
  let exited!: Promise<void>;
  let output: string[] = [];

  const spawnFulcrum = () => {
    const args = [
      '-D', datadir,
      '-b', nodeAddress,
      '-K', node.cookieFile,
      '-t', `127.0.0.1:${port}`,
      '-T', String(options.pollSeconds ?? 0.5),
      '--ts-format', 'none',
      ...(options.args ?? []),
    ];
    child = spawn(located.path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    output = [];
    const keep = (data: Buffer) => {
      output.push(...data.toString('utf8').split('\n').filter((line) => line !== ''));
      if (output.length > 200) output.splice(0, output.length - 200);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const current = child;
    exited = new Promise((resolve) => current.once('exit', () => resolve()));
    void exited.then(() => live.delete(current));
  };

  const logTail = () => output.slice(-20).join('\n');
  const running = () => child.exitCode === null && child.signalCode === null;
  const request = <T>(method: string, params: unknown[]) => electrumRequest<T>(port, method, params);

  const waitForTip = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    for (;;) {
      if (!running()) throw new Error(`Fulcrum exited with ${child.exitCode ?? child.signalCode}:\n${logTail()}`);
      try {
        const best = await node.rpc.call<string>('getbestblockhash');
        const tip = await request<{ height: number; hex: string }>('blockchain.headers.subscribe', []);
        if (headerHash(tip.hex) === best) return;
        last = `Fulcrum at ${tip.height} ${headerHash(tip.hex)}, the node at ${best}`;
      } catch (error) {
        // Fulcrum listens only once its first indexing is done: refused until then.
        last = (error as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`Fulcrum did not reach the node's tip within ${timeoutMs} ms (${last}):\n${logTail()}`);
      await sleep(100);
    }
  };

  const kill = async () => {
    if (running()) child.kill('SIGKILL');
    await exited;
  };

  const startAndWait = async () => {
    spawnFulcrum();
    try {
      await waitForTip();
    } catch (error) {
      await kill();
      throw error;
    }
  };

  // A free port may be taken before Fulcrum binds it: try again with another.
  for (let attempt = 0; ; attempt++) {
    try {
      await startAndWait();
      break;
    } catch (error) {
      if (attempt < 2 && /address already in use|Failed to listen|bind/i.test(logTail())) {
        port = await freePort();
        continue;
      }
      rmSync(datadir, { recursive: true, force: true });
      throw error;
    }
  }

  let removed = false;
  return {
    url: `tcp://127.0.0.1:${port}`,
    get port() {
      return port;
    },
    datadir,
    get child() {
      return child;
    },
    request,
    waitForTip,
    kill,
    async restart() {
      if (removed) throw new Error('Fulcrum: restart after stop() removed its folder');
      await kill();
      await startAndWait();
    },
    async stop({ keepData = false } = {}) {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
      if (!keepData && !removed) {
        removed = true;
        rmSync(datadir, { recursive: true, force: true });
      }
    },
    logTail,
  };
}
