/**
 * A wallet's first gap derived on a worker thread: the sync's load of a new wallet derives 20 + 20 scripts of a
 * 2-of-3 (about 10 ms of elliptic-curve work), which on the request thread made every creation in flight wait
 * for it. The main thread sends the descriptor and the range, and gets the scripts back as hex.
 *
 * Only the built service has a worker: its entry is the compiled `gap-derivation-worker.js` next to this file.
 * Run from the TypeScript sources (the tests' in-process servers) there is none, and scripts are derived in
 * process as before.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { NetworkName } from '../core/network.js';

export interface GapRequest {
  id: number;
  descriptor: string;
  network: NetworkName;
  from: number;
  count: number;
}

export type GapAnswer = { id: number; scripts: string[] } | { id: number; error: string };

interface Waiting {
  resolve: (scripts: string[]) => void;
  reject: (error: Error) => void;
}

export interface GapDerivationOptions {
  /** Where a failed worker is reported: from then on every gap is derived on the thread answering requests. */
  log?: ((level: 'warn', message: string, details?: Record<string, unknown>) => void) | undefined;
  /** The worker's entry (default: the compiled one beside this module). */
  entry?: URL;
}

export class GapDerivation {
  private nextId = 0;
  /** Set by stop(): the worker's end is then asked for, not a failure. */
  private stopping = false;
  private failed = false;
  private readonly waiting = new Map<number, Waiting>();
  /** Started by the first derivation: commands that derive nothing never pay for a thread. */
  private worker: Worker | undefined;

  private constructor(
    private readonly entry: URL,
    private readonly log: GapDerivationOptions['log'],
  ) {}

  /** The worker, or undefined where none can run (no compiled entry beside this module). */
  static start({ entry = new URL('./gap-derivation-worker.js', import.meta.url), log }: GapDerivationOptions = {}): GapDerivation | undefined {
    return existsSync(fileURLToPath(entry)) ? new GapDerivation(entry, log) : undefined;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.entry);
    worker.on('message', (answer: GapAnswer) => {
      const waiting = this.waiting.get(answer.id);
      if (!waiting) return;
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) worker.unref();
      if ('error' in answer) waiting.reject(new Error(answer.error));
      else waiting.resolve(answer.scripts);
    });
    // A failed worker fails what waits on it and is not used again; callers derive in process instead.
    worker.on('error', (error) => this.fail(error.message));
    worker.on('exit', (code) => this.fail(`the worker exited with code ${code}`));
    return (this.worker = worker);
  }

  /** The branch's scripts (hex) for indexes from .. from + count - 1. Rejects if the worker cannot derive them. */
  derive(descriptor: string, network: NetworkName, from: number, count: number): Promise<string[]> {
    if (this.stopping || this.failed) return Promise.reject(new Error('The derivation worker stopped'));
    const id = this.nextId++;
    const worker = this.started();
    // Held by the process only while a derivation waits on it: an idle worker never keeps the process alive.
    if (this.waiting.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, descriptor, network, from, count } satisfies GapRequest);
    });
  }

  /** Ends the thread; derivations waiting on it reject (their callers derive in process). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.worker?.terminate();
  }

  /** The worker's end (an error is followed by an exit): what waits is rejected; a failure is said once. */
  private fail(reason: string): void {
    if (!this.stopping && !this.failed) {
      // Said because it costs: every new wallet's gap now takes the request thread's time (ADR 0021).
      this.log?.('warn', 'the gap derivation worker failed: new wallets\' gaps are derived in process from now on', { reason });
    }
    this.failed = true;
    for (const waiting of this.waiting.values()) waiting.reject(new Error('The derivation worker stopped'));
    this.waiting.clear();
  }
}
