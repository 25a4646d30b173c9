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

interface Job {
  request: GapRequest;
  resolve: (scripts: string[]) => void;
  reject: (error: Error) => void;
}

/** A range asked for ahead: its scripts, and a way to put it before the other ranges asked for ahead once someone waits for it. */
export interface GapJob {
  readonly scripts: Promise<string[]>;
  hurry(): void;
}

/**
 * Ranges handed to the worker at a time: one derived while the next is on its way. The others wait here, where a range
 * someone waits for goes before those asked for ahead (a sync's load asks for a hundred wallets' gaps ahead).
 */
const IN_FLIGHT = 2;

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
  private readonly inFlight = new Map<number, Job>();
  /** Waiting to be handed to the worker: ranges someone waits for, then ranges asked for ahead. */
  private readonly queued: [now: Job[], ahead: Job[]] = [[], []];
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
      const job = this.inFlight.get(answer.id);
      if (!job) return;
      this.inFlight.delete(answer.id);
      this.handOver();
      if (this.waitingCount() === 0) worker.unref();
      if ('error' in answer) job.reject(new Error(answer.error));
      else job.resolve(answer.scripts);
    });
    // A failed worker fails what waits on it and is not used again; callers derive in process instead.
    worker.on('error', (error) => this.fail(error.message));
    worker.on('exit', (code) => this.fail(`the worker exited with code ${code}`));
    return (this.worker = worker);
  }

  /** The branch's scripts (hex) for indexes from .. from + count - 1. Rejects if the worker cannot derive them. */
  derive(descriptor: string, network: NetworkName, from: number, count: number): Promise<string[]> {
    return this.enqueue(0, descriptor, network, from, count).scripts;
  }

  /** The same, asked for ahead of need: handed to the worker after every range someone waits for, until `hurry()`. */
  deriveAhead(descriptor: string, network: NetworkName, from: number, count: number): GapJob {
    return this.enqueue(1, descriptor, network, from, count);
  }

  private enqueue(level: 0 | 1, descriptor: string, network: NetworkName, from: number, count: number): GapJob {
    if (this.stopping || this.failed) return { scripts: Promise.reject(new Error('The derivation worker stopped')), hurry: () => {} };
    const worker = this.started();
    // Held by the process only while a derivation waits on it: an idle worker never keeps the process alive.
    if (this.waitingCount() === 0) worker.ref();
    let job!: Job;
    const scripts = new Promise<string[]>((resolve, reject) => {
      job = { request: { id: this.nextId++, descriptor, network, from, count }, resolve, reject };
    });
    this.queued[level].push(job);
    this.handOver();
    const hurry = () => {
      const at = this.queued[1].indexOf(job);
      if (at < 0) return; // with the worker already, or not asked for ahead
      this.queued[1].splice(at, 1);
      this.queued[0].push(job);
    };
    return { scripts, hurry };
  }

  /** Hands the worker the next ranges, those someone waits for first. */
  private handOver(): void {
    while (this.worker && !this.failed && this.inFlight.size < IN_FLIGHT) {
      const job = this.queued[0].shift() ?? this.queued[1].shift();
      if (!job) return;
      this.inFlight.set(job.request.id, job);
      this.worker.postMessage(job.request);
    }
  }

  private waitingCount(): number {
    return this.inFlight.size + this.queued[0].length + this.queued[1].length;
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
    for (const job of [...this.inFlight.values(), ...this.queued[0], ...this.queued[1]]) job.reject(new Error('The derivation worker stopped'));
    this.inFlight.clear();
    this.queued[0].length = 0;
    this.queued[1].length = 0;
  }
}
