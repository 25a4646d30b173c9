/**
 * The service's pino logger (JSON lines). Requests are logged as one line each with method, path,
 * status and time only: no headers, no bodies, so no password, token or Authorization header.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config.js';

/** Redacted wherever they would appear, as a second line of defence. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  '*.password',
  'jwt_token',
  '*.jwt_token',
  'token',
  '*.token',
];

/**
 * Default destination: stdout, in blocks of up to 4 KB (a busy server writes many lines per call
 * instead of one call per line), and at least every quarter second, so a quiet server's lines still
 * show at once. Call `flushLogger` before the process exits.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: SERVICE_NAME } };
  return pino(options, destination ?? stdoutLines());
}

/** The `service` field of every line. */
const SERVICE_NAME = 'wcs';
const BLOCK_CHARS = 4096;
const FLUSH_EVERY_MS = 250;

/**
 * Lines are gathered in an array and joined once per block. pino's own buffered destination
 * (sonic-boom) appends each line to a growing string and measures it again on every write; under
 * load that cost more than the rest of a small request. Writes go through `process.stdout`, which
 * Node writes synchronously to files, pipes and terminals on Linux, so a block is never lost to an
 * unfinished asynchronous write at exit; one process-wide instance keeps every logger's lines in order.
 */
class StdoutLines implements DestinationStream {
  private lines: string[] = [];
  private chars = 0;
  private broken = false;

  constructor() {
    // A stdout that fails (a closed pipe: EPIPE) ends logging instead of the process.
    process.stdout.on('error', () => {
      this.broken = true;
      this.lines = [];
    });
    process.on('exit', () => this.writeOut());
    setInterval(() => this.writeOut(), FLUSH_EVERY_MS).unref();
  }

  write(line: string): void {
    if (this.broken) return;
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= BLOCK_CHARS) this.writeOut();
  }

  /** pino's `logger.flush(cb)`: the callback runs once stdout has taken every line. */
  flush(done: (error?: Error) => void): void {
    this.writeOut();
    if (this.broken || !process.stdout.writableNeedDrain) done();
    else process.stdout.once('drain', () => done());
  }

  private writeOut(): void {
    if (this.lines.length === 0 || this.broken) return;
    const block = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    process.stdout.write(block);
  }
}

let stdoutDestination: StdoutLines | undefined;

function stdoutLines(): StdoutLines {
  stdoutDestination ??= new StdoutLines();
  return stdoutDestination;
}

/** Resolves once buffered log lines are written. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/** What the one line per request tells: no headers, no body, the path without its query. */
export interface RequestLine {
  reqId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  ip: string;
}

/**
 * Writes the one line per request in pino's own format (level, time, service, the fields, msg) to
 * the logger's destination. The line is built directly: pino's generic serialisation (and its
 * redaction, with nothing to find here) cost more than the rest of a small request's own work.
 */
export function createRequestLog(logger: Logger): (line: RequestLine) => void {
  if (!logger.isLevelEnabled('info')) return () => {};
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym] as DestinationStream;
  const info = logger.levels.values.info;
  const text = JSON.stringify;
  const service = text(SERVICE_NAME);
  return (line) =>
    destination.write(
      `{"level":${info},"time":${Date.now()},"service":${service},"reqId":${text(line.reqId)},"method":${text(line.method)},` +
        `"path":${text(line.path)},"status":${line.status},"ms":${Number.isFinite(line.ms) ? line.ms : null},"ip":${text(line.ip)},"msg":"request"}\n`,
    );
}
