/**
 * Newline-delimited JSON-RPC 2.0 over one socket, as Electrum servers speak it: requests and batch arrays out,
 * responses matched by id (a batch's answers may come in any order), notifications (no id) handed on. A line
 * that is not JSON, longer than the cap, or not JSON-RPC ends the connection with `bad_response`.
 *
 * Lines are gathered as a list of chunks and joined once complete, so a large answer costs linear time; each
 * line is parsed on its own, so the event loop is held for at most one line's JSON.parse.
 */
import type { Socket } from 'node:net';
import { ChainError } from '../types.js';

export type CallOutcome<T = unknown> = { ok: true; result: T } | { ok: false; error: ChainError };

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface RpcConnectionOptions {
  /** Longest accepted line in bytes. */
  maxLineBytes: number;
  onNotification(method: string, params: unknown[]): void;
  /** Called once when the connection ends, with why (pending calls have already failed with it). */
  onClose(error: ChainError): void;
  /** Lines the connection could not attribute (an error with a null id): for the operator's log. */
  onStray(message: string): void;
}

/** A batch the server answered with one error instead of an array: it does not take batches (or not this size). */
export class BatchRefused extends Error {
  constructor(readonly serverMessage: string) {
    super('The Electrum server refused a JSON-RPC batch');
  }
}

/** Outcomes of a batch array, and the bytes of the answer line they came in (what sizes later pages). */
export interface BatchAnswer {
  outcomes: CallOutcome[];
  answerBytes: number;
}

interface Pending {
  method: string;
  /** `bytes`: this call's share of the answer line. */
  settle(outcome: CallOutcome, bytes?: number): void;
}

interface OutstandingBatch {
  ids: number[];
  refuse(error: BatchRefused): void;
}

const MAX_MESSAGE_CHARS = 200;

export class RpcConnection {
  private readonly pending = new Map<number, Pending>();
  /** Batches sent and not fully answered, oldest first: a null-id error is the oldest one's refusal. */
  private readonly batches: OutstandingBatch[] = [];
  private readonly chunks: Buffer[] = [];
  private chunkBytes = 0;
  private nextId = 1;
  private closedWith: ChainError | undefined;
  /** When a line was last written (for the keep-alive). */
  lastWriteAt = Date.now();

  constructor(
    private readonly socket: Socket,
    private readonly options: RpcConnectionOptions,
  ) {
    let socketError: NodeJS.ErrnoException | undefined;
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => (socketError = error));
    socket.on('close', () => {
      const cause = socketError?.code ? ` (${socketError.code})` : '';
      this.close(new ChainError('unreachable', `The connection to the Electrum server was lost${cause}`, { retryable: true }));
    });
    socket.resume();
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** One call; rejects with the server's error (`rpc_error`), `timeout`, or why the connection ended. */
  async request(method: string, params: unknown[], timeoutMs: number): Promise<unknown> {
    const { outcomes } = await this.call(method, params, timeoutMs);
    const outcome = outcomes[0]!;
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /** Many single calls written together (one system call), answered each on its own. */
  callMany(calls: readonly RpcCall[], timeoutMs: number): Promise<BatchAnswer[]> {
    this.socket.cork();
    try {
      return Promise.all(calls.map((call) => this.call(call.method, call.params, timeoutMs)));
    } finally {
      this.socket.uncork();
    }
  }

  /** One call as its outcome, with the size of its answer. */
  call(method: string, params: unknown[], timeoutMs: number): Promise<BatchAnswer> {
    return new Promise((resolve) => {
      const id = this.register(method, (outcome) => resolve({ outcomes: [outcome], answerBytes: 0 }));
      if (id === undefined) return;
      const timer = setTimeout(() => this.expire([id], timeoutMs), timeoutMs);
      this.pending.get(id)!.settle = (outcome, bytes = 0) => {
        clearTimeout(timer);
        resolve({ outcomes: [outcome], answerBytes: bytes });
      };
      this.write({ jsonrpc: '2.0', method, params, id });
    });
  }

  /**
   * One JSON-RPC batch array; outcomes in the order of `calls`. Rejects with BatchRefused when the server
   * answers the array with a single error; a call's own error is its outcome.
   */
  batch(calls: readonly RpcCall[], timeoutMs: number): Promise<BatchAnswer> {
    if (this.closedWith) return Promise.resolve({ outcomes: calls.map(() => ({ ok: false, error: this.closedWith! })), answerBytes: 0 });
    if (calls.length === 0) return Promise.resolve({ outcomes: [], answerBytes: 0 });
    return new Promise((resolve, reject) => {
      const outcomes: CallOutcome[] = new Array<CallOutcome>(calls.length);
      let remaining = calls.length;
      let answerBytes = 0;
      const ids = calls.map((call, index) =>
        this.register(call.method, (outcome, bytes = 0) => {
          outcomes[index] = outcome;
          answerBytes += bytes;
          if (--remaining > 0) return;
          finish();
          resolve({ outcomes, answerBytes });
        })!,
      );
      const timer = setTimeout(() => this.expire(ids, timeoutMs), timeoutMs);
      const entry: OutstandingBatch = {
        ids,
        refuse: (error) => {
          finish();
          for (const id of ids) this.pending.delete(id);
          reject(error);
        },
      };
      const finish = () => {
        clearTimeout(timer);
        this.dropBatch(entry);
      };
      this.batches.push(entry);
      this.write(calls.map((call, index) => ({ jsonrpc: '2.0', method: call.method, params: call.params, id: ids[index] })));
    });
  }

  /** Ends the connection; every pending call fails with `error`. Idempotent. */
  close(error: ChainError): void {
    if (this.closedWith) return;
    this.closedWith = error;
    this.socket.destroy();
    this.chunks.length = 0;
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.batches.length = 0;
    for (const call of pending) call.settle({ ok: false, error });
    this.options.onClose(error);
  }

  private register(method: string, settle: (outcome: CallOutcome) => void): number | undefined {
    if (this.closedWith) {
      settle({ ok: false, error: this.closedWith });
      return undefined;
    }
    const id = this.nextId++;
    this.pending.set(id, { method, settle });
    return id;
  }

  private expire(ids: readonly number[], timeoutMs: number): void {
    for (const id of ids) {
      const call = this.pending.get(id);
      if (!call) continue;
      this.pending.delete(id);
      const seconds = Math.round(timeoutMs / 100) / 10;
      call.settle({ ok: false, error: new ChainError('timeout', `The Electrum server did not answer ${call.method} within ${seconds} s`, { retryable: true }) });
    }
  }

  private dropBatch(entry: OutstandingBatch): void {
    const index = this.batches.indexOf(entry);
    if (index >= 0) this.batches.splice(index, 1);
  }

  private write(message: unknown): void {
    this.lastWriteAt = Date.now();
    this.socket.write(`${JSON.stringify(message)}\n`);
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    while (!this.closedWith) {
      const newline = chunk.indexOf(10, start);
      if (newline < 0) break;
      const tail = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.chunkBytes + tail.length > this.options.maxLineBytes) return this.tooLong();
      let line: Buffer = tail;
      if (this.chunks.length > 0) {
        this.chunks.push(tail);
        line = Buffer.concat(this.chunks, this.chunkBytes + tail.length);
        this.chunks.length = 0;
        this.chunkBytes = 0;
      }
      this.handleLine(line);
    }
    if (this.closedWith || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.chunkBytes + rest.length > this.options.maxLineBytes) return this.tooLong();
    this.chunks.push(rest);
    this.chunkBytes += rest.length;
  }

  private tooLong(): void {
    const cap = this.options.maxLineBytes;
    const size = cap >= 1024 * 1024 ? `${Math.round(cap / 1024 / 1024)} MiB` : `${cap} bytes`;
    this.close(new ChainError('bad_response', `The Electrum server sent a message longer than ${size}`, { retryable: true }));
  }

  private handleLine(line: Buffer): void {
    const text = line.toString('utf8').trim();
    if (text === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return this.garbage('a line that is not JSON');
    }
    if (Array.isArray(message)) {
      if (message.length === 0) return this.garbage('an empty batch answer');
      const share = line.length / message.length;
      for (const item of message) {
        if (this.closedWith) return;
        this.handleMessage(item, share);
      }
      return;
    }
    this.handleMessage(message, line.length);
  }

  private handleMessage(message: unknown, bytes: number): void {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return this.garbage('something that is not a JSON-RPC object');
    const body = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (body.id === undefined || body.id === null) {
      if (typeof body.method === 'string') return this.notify(body.method, body.params);
      if (body.error !== undefined && body.error !== null) return this.strayError(errorText(body.error));
      return this.garbage('a JSON-RPC object without id or method');
    }
    if (typeof body.id !== 'number') return this.garbage('a JSON-RPC answer with an id it was not given');
    const call = this.pending.get(body.id);
    // An answer that came after its call timed out.
    if (!call) return;
    this.pending.delete(body.id);
    if (body.error !== undefined && body.error !== null) {
      const text = errorText(body.error);
      const code = (body.error as { code?: unknown }).code;
      call.settle(
        {
          ok: false,
          error: new ChainError('rpc_error', `The Electrum server refused ${call.method}: ${text}`, {
            rpcCode: typeof code === 'number' ? code : undefined,
            reason: text,
          }),
        },
        bytes,
      );
    } else if ('result' in body) {
      call.settle({ ok: true, result: body.result }, bytes);
    } else {
      call.settle({ ok: false, error: new ChainError('bad_response', `The Electrum server answered ${call.method} with neither a result nor an error`) }, bytes);
    }
  }

  private notify(method: string, params: unknown): void {
    const list = Array.isArray(params) ? params : params === undefined ? [] : [params];
    this.options.onNotification(method, list);
  }

  private strayError(text: string): void {
    const batch = this.batches.shift();
    if (batch) batch.refuse(new BatchRefused(text));
    else this.options.onStray(text);
  }

  private garbage(what: string): void {
    this.close(new ChainError('bad_response', `The Electrum server sent ${what}`, { retryable: true }));
  }
}

function errorText(error: unknown): string {
  const raw = typeof error === 'string' ? error : typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : JSON.stringify(error);
  return raw.length > MAX_MESSAGE_CHARS ? `${raw.slice(0, MAX_MESSAGE_CHARS)}…` : raw;
}
