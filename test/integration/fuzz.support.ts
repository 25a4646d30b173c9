/**
 * Hostile-input generators and a raw HTTP client for the fuzz test. Requests go over a plain
 * socket so that anything can be sent: invalid header bytes, duplicate headers, malformed
 * percent-encoding, a Content-Length that lies.
 */
import { connect } from 'node:net';
import fc from 'fast-check';

export interface RawRequest {
  method: string;
  /** Path and query, sent as they are (not encoded again). */
  target: string;
  headers: [string, string][];
  body: Buffer | undefined;
}

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Sends one request on a fresh connection (Connection: close) and reads the whole answer. */
export function sendRaw(port: number, request: RawRequest, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${request.method} ${request.target}`));
    }, timeoutMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {}); // a reset after the answer is fine; a missing answer fails below
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!match || end < 0) return reject(new Error(`no HTTP answer to ${request.method} ${request.target}: ${JSON.stringify(text.slice(0, 200))}`));
      const headers = new Map<string, string>();
      for (const line of text.slice(0, end).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
      }
      let body: Buffer = Buffer.from(text.slice(end + 4), 'latin1');
      if (headers.get('transfer-encoding') === 'chunked') body = dechunk(body);
      resolve({ status: Number(match[1]), headers, body: body.toString('utf8') });
    });
    const head = [`${request.method} ${request.target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
    for (const [name, value] of request.headers) head.push(`${name}: ${value}`);
    const hasLength = request.headers.some(([name]) => name.toLowerCase() === 'content-length');
    if (request.body !== undefined && !hasLength) head.push(`Content-Length: ${request.body.length}`);
    socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), request.body ?? Buffer.alloc(0)]));
  });
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Strings that have broken parsers, routers and SQL before. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '9'.repeat(400),
  'null',
  'true',
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '%00',
  '%',
  '%zz',
  '%c0%ae%c0%ae/',
  '\u0000',
  "'; drop table tokens; --",
  "' or '1'='1",
  '" or ""="',
  '1; select pg_sleep(10)',
  'admin\'--',
  '\\x00\\x1a',
  '$(reboot)',
  '`id`',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'prototype',
  '\u202e\u0644\u0627 \ud83d\udca9 \u00e9\u0301 \ufeff',
  '\ud800',
  'ＡＢＣ１２３',
  'a'.repeat(70_000),
  '1 days',
  '1.5 hours',
  '99999999999999999999 weeks',
  '0 seconds',
  '-5 days',
  '1e400 s',
];

const nastyString = fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 300 }));

const hugeNumber = fc.constantFrom('1e308', '-1e308', '1e400', '123456789012345678901234567890', '-0', '0.1e-400', '21000000.000000001', '2100000000000000.1');

/** A JSON value as text: ordinary values, wrong types, huge numbers, deep nesting, duplicate keys. */
export function jsonText(knownKeys: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(fc.constantFrom(...knownKeys, '__proto__', 'constructor', ''), nastyString);
  const value: fc.Arbitrary<string> = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    nastyString.map((s) => JSON.stringify(s)),
    hugeNumber,
    fc.constantFrom('true', 'false', 'null', '[]', '{}', '[null]', '{"": {}}'),
  );
  const object = fc
    .array(fc.tuple(key, value), { maxLength: 8 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);
  // Every known key with a value of any type, some of them twice (the last one wins in JSON.parse).
  const shaped = fc
    .tuple(fc.array(value, { minLength: knownKeys.length, maxLength: knownKeys.length }), fc.subarray([...knownKeys]), value)
    .map(([values, twice, again]) => `{${[...knownKeys.map((k, i) => `${JSON.stringify(k)}:${values[i]}`), ...twice.map((k) => `${JSON.stringify(k)}:${again}`)].join(',')}}`);
  const deep = fc.tuple(fc.integer({ min: 10, max: 200_000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => {
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(depth)}1${close.repeat(depth)}`;
  });
  const broken = fc.oneof(fc.constantFrom('{', '{"a":1,}', "{'a':1}", '[1,2', '\ufeff{}', '{"a":1}{"b":2}', 'NaN', '1e99999'), fc.string({ maxLength: 100 }));
  return fc.oneof({ weight: 3, arbitrary: shaped }, { weight: 3, arbitrary: object }, { weight: 2, arbitrary: value }, { weight: 1, arbitrary: deep }, { weight: 1, arbitrary: broken });
}

/** Every byte of the UTF-8 form outside [A-Za-z0-9._~-] as %XX (lone surrogates become U+FFFD). */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) out += /[A-Za-z0-9._~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`;
  return out;
}

/** A path segment for a path parameter: nasty text, percent-encoded or sent raw. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  nastyString.map((s) => percentEncode(s.slice(0, 2000))),
  fc.constantFrom('..', '.', '%2e%2e', '..%2f..%2fservice', '%2F', '%00', '%', '%zz', 'a%20b', 'x'.repeat(5000), '00000000-0000-0000-0000-000000000000'),
);

export const queryString: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?', '?a=1&a=2', '?__proto__[x]=1', '?a[b][c]=1', '?%zz', `?x=${'y'.repeat(3000)}`),
  fc.string({ maxLength: 50 }).map((s) => `?q=${encodeURIComponent(s)}`),
);

/** Header values as raw bytes: printable garbage, control characters, very long values. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, '')),
  fc.constantFrom('', ' ', '\t', '\u0000', '\u007f', '\u00ff\u00fe', 'x'.repeat(8000)),
);

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant('application/json'),
  fc.constant(undefined),
  fc.constantFrom(
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json, text/plain',
    'application/vnd.api+json',
    '*/*',
    '',
  ),
);
