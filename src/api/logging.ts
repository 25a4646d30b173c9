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
 * Default destination: stdout, written asynchronously and in blocks of up to 4 KB (a busy server
 * writes many lines per call instead of one call per line), and at least every quarter second, so
 * a quiet server's lines still show at once. Call `flushLogger` before the process exits.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'wcs' } };
  return pino(options, destination ?? bufferedStdout());
}

const FLUSH_EVERY_MS = 250;

function bufferedStdout(): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => {
    try {
      stream.flush();
    } catch {
      clearInterval(timer); // closed at exit
    }
  }, FLUSH_EVERY_MS);
  timer.unref();
  return stream;
}

/** Resolves once buffered log lines are written. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/**
 * The logger of the one line per request: the same destination and level, without redaction, which
 * cost more than the rest of the line and has nothing to find there (method, path without its query,
 * status, time, client address).
 */
export function createAccessLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: logger.level, base: { service: 'wcs' } }, destination);
}
