/** The one line per request: pino's format, built by hand, and silent below the info level. */
import { describe, expect, it } from 'vitest';
import { createLogger, createRequestLog } from '../../../src/api/logging.js';

function capture(level: 'info' | 'warn') {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(line) });
  return { logger, lines, log: createRequestLog(logger) };
}

describe('request log line', () => {
  it('is one JSON line with the fields of a pino line, whatever characters the path holds', () => {
    const { logger, lines, log } = capture('info');
    logger.info({ reqId: 'req-0' }, 'request');
    const path = '/api/v1alpha/wallets/a"b\\c\u2028é';
    log({ reqId: 'req-1', method: 'GET', path, status: 404, ms: 1.5, ip: '::1' });
    expect(lines).toHaveLength(2);
    expect(lines[1]!.endsWith('\n')).toBe(true);
    const ours = JSON.parse(lines[1]!);
    const pinos = JSON.parse(lines[0]!);
    expect(Object.keys(ours)).toEqual(['level', 'time', 'service', 'reqId', 'method', 'path', 'status', 'ms', 'ip', 'msg']);
    expect(ours).toMatchObject({ level: pinos.level, service: pinos.service, msg: 'request', reqId: 'req-1', method: 'GET', path, status: 404, ms: 1.5, ip: '::1' });
    expect(Math.abs(ours.time - pinos.time)).toBeLessThan(60_000);
  });

  it('writes a time that is not a finite number as null, keeping the line valid JSON', () => {
    const { lines, log } = capture('info');
    log({ reqId: 'req-1', method: 'GET', path: '/', status: 200, ms: Number.NaN, ip: '127.0.0.1' });
    expect(JSON.parse(lines[0]!).ms).toBeNull();
  });

  it('writes nothing when the level is above info', () => {
    const { lines, log } = capture('warn');
    log({ reqId: 'req-1', method: 'GET', path: '/', status: 200, ms: 1, ip: '127.0.0.1' });
    expect(lines).toEqual([]);
  });
});
