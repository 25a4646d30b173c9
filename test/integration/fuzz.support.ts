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
  fc.constantFrom('?branch=change&from=0&count=10', '?branch=receive&from=2147483647&count=1000', '?count=1001', '?format=base64', '?format=binary', '?format=xml', '?limit=2&offset=1', '?limit=-1', '?offset=1e3'),
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

/** What the fuzzed service holds: real wallets, coins and PSBTs that plausible bodies refer to. */
export interface FuzzWorld {
  /** Addresses of the service's network (several types, one in upper case). */
  addresses: string[];
  /** Addresses of other networks. */
  foreignAddresses: string[];
  /** Coins of the spendable wallet. */
  coins: { txid: string; vout: number }[];
  /** Receive and change descriptors of fixture wallets (with checksums). */
  descriptors: { recv: string; change: string }[];
  /** PSBTs in base64: the stored pending one and PSBTs of other transactions. */
  psbts: string[];
  users: string[];
}

const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 2 }), nastyString, fc.constantFrom(null, true, -1, 0, 1e308, 2 ** 53 + 1, 0.1));

/**
 * A body of the right shape with at most two top-level fields replaced by anything: most requests pass
 * the schema and reach the use case, and the rest probe one field's validation at a time.
 */
function spoiled(valid: fc.Arbitrary<Record<string, unknown>>, keys: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(valid, fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom(...keys), anyJsonValue), { minLength: 1, maxLength: 2 }) }))
    .map(([body, replaced]) => JSON.stringify({ ...body, ...Object.fromEntries(replaced) }));
}

/** Flips one byte of a base64 PSBT: a copy that still parses often, but no longer matches or verifies. */
const mutatedPsbt = (psbts: string[]): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...psbts), fc.nat(), fc.integer({ min: 1, max: 255 })).map(([base64, at, xor]) => {
    const bytes = Buffer.from(base64, 'base64');
    bytes[at % bytes.length]! ^= xor;
    return bytes.toString('base64');
  });

/** An amount with its unit: mostly one a fixture wallet can pay, sometimes anything (dust, too fine, huge, not a number). */
const amountWithUnit = fc.oneof(
  { weight: 3, arbitrary: fc.record({ amount: fc.integer({ min: 546, max: 5_000_000 }), unit: fc.constant('sat') }) },
  { weight: 3, arbitrary: fc.record({ amount: fc.constantFrom<unknown>('0.001', '0.0004', 0.02, '0.05'), unit: fc.constantFrom<unknown>('btc', undefined) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      amount: fc.oneof(
        fc.integer({ min: -10, max: 2_100_000_000_000_000 }),
        fc.double({ noNaN: true }),
        fc.constantFrom('0.00000546', '0.00000001', '0.000000001', '1e-8', '21000001', ' 0.01', '0x10', '1_000', '1,5', '+1', '.5', '5.', '00.1', '', '-0.001', '1000'),
      ),
      unit: fc.constantFrom<unknown>('btc', 'sat', undefined),
    }),
  },
);
const feeRate = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<unknown>('2', 1, '1.5', 3.25, '1000', null, '') },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('0.5', 0, 1000.5, '1e3', 99999, '-1', 'fast', '2.0000000001') },
);
const label = fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.constant('x'.repeat(257)) }, { weight: 1, arbitrary: nastyString });
const optional = <T>(arbitrary: fc.Arbitrary<T>, absentWeight = 1): fc.Arbitrary<T | undefined> => fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
const defined = (body: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));

/**
 * Bodies close to valid for the operations that take one, keyed by `METHOD path` as in the OpenAPI
 * document: they get past schema validation into the use cases (coin selection, descriptor parsing,
 * signature merging), where the generic bodies of `jsonText` rarely reach.
 */
export function plausibleBodies(world: FuzzWorld): Map<string, fc.Arbitrary<string>> {
  const address = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...world.addresses) }, { weight: 1, arbitrary: fc.constantFrom(...world.foreignAddresses) }, { weight: 1, arbitrary: nastyString });
  const coin = fc.oneof(fc.constantFrom(...world.coins), fc.record({ txid: fc.constantFrom(...world.coins.map((c) => c.txid)), vout: fc.integer({ min: 0, max: 5 }) }));
  const descriptor = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...world.descriptors.flatMap((d) => [d.recv, d.change])) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...world.descriptors), fc.nat(), fc.string({ minLength: 1, maxLength: 1 })).map(([d, at, c]) => d.recv.slice(0, at % d.recv.length) + c + d.recv.slice((at % d.recv.length) + 1)) },
  );
  const multipath = fc.constantFrom(...world.descriptors).map((d) => d.recv.replace(/#.*$/, '').replace('/0/*', '/<0;1>/*'));
  const keys = fc.oneof(fc.record({ descriptor: multipath }), fc.record({ recv_descriptor: descriptor, change_descriptor: descriptor }));
  const shares = fc.array(fc.record({ user: fc.constantFrom(...world.users), access: fc.constantFrom('read', 'spend') }), { maxLength: 2 });
  const psbtCreation = fc
    .record({
      recipients: fc.array(fc.tuple(fc.record({ address, label: optional(label) }), amountWithUnit).map(([entry, paid]) => defined({ ...entry, ...paid })), { minLength: 1, maxLength: 3, size: 'xsmall' }),
      fee_rate: optional(feeRate),
      rbf: optional(fc.boolean()),
      subtract: optional(fc.boolean(), 3),
      subtract_from: optional(fc.constantFrom<unknown>('0', '1', 0, 3, '-1', '0x0')),
      rbf_tx_id: optional(fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...world.coins.map((c) => c.txid)) })),
      inputs: optional(fc.array(coin, { minLength: 1, maxLength: 3 }), 3),
      change_address: optional(address, 3),
    })
    .map(defined);
  const walletCreation = fc
    .tuple(
      fc.record({
        name: label,
        alias: optional(fc.oneof(fc.constantFrom('fuzz-new', 'w_wpkh', 'W_NEW', '../w_wpkh', 'a'.repeat(65)), fc.stringMatching(/^[a-z0-9_-]{1,8}$/))),
        birthday: optional(fc.constantFrom<unknown>(0, 120, 129, 10_000_000, '2020-01-01', '2099-01-01', '2020-02-30')),
        gap_limit: optional(fc.constantFrom(1, 20, 1000, 0, 1001)),
        shared_with: optional(shares),
      }),
      keys,
    )
    .map(([fields, keyFields]) => defined({ ...fields, ...keyFields }));
  const fingerprint = fc.constantFrom('d34db33f', 'F00DBABE', '1234567', 'zzzzzzzz', ...world.descriptors.map((d) => /\[([0-9a-f]{8})/.exec(d.recv)?.[1] ?? '00000000'));
  const bodies: [string, fc.Arbitrary<string>][] = [
    ['POST /api/v1alpha/token', spoiled(fc.record({ jwt_token_description: label, jwt_token_life: fc.constantFrom('1 days', '2 hours', '90', '1.5 weeks', '366 days', '0 s') }), ['jwt_token_description', 'jwt_token_life'])],
    ['POST /api/v1alpha/wallets/{wallet_alias}/psbt', spoiled(psbtCreation, ['recipients', 'fee_rate', 'rbf', 'subtract', 'subtract_from', 'rbf_tx_id', 'inputs', 'change_address'])],
    ['PUT /api/v1alpha/wallets/{wallet_alias}/psbt/{txid}', spoiled(fc.record({ psbt: fc.oneof(fc.constantFrom(...world.psbts), mutatedPsbt(world.psbts)) }), ['psbt'])],
    ['POST /api/v1alpha/wallets', spoiled(walletCreation, ['name', 'alias', 'descriptor', 'recv_descriptor', 'change_descriptor', 'policy', 'birthday', 'gap_limit', 'shared_with'])],
    [
      'PATCH /api/v1alpha/wallets/{wallet_alias}',
      spoiled(
        fc.record({ name: optional(label), description: optional(label), labels: optional(fc.array(fc.record({ fingerprint, label }), { maxLength: 2 })), shared_with: optional(shares) }).map(defined),
        ['name', 'description', 'labels', 'shared_with'],
      ),
    ],
    ['PATCH /api/v1alpha/wallets/{wallet_alias}/utxo', spoiled(fc.tuple(coin, fc.record({ frozen: optional(fc.boolean()), label: optional(label) })).map(([c, rest]) => defined({ ...c, ...rest })), ['txid', 'vout', 'frozen', 'label'])],
    ['POST /api/v1alpha/wallets/{wallet_alias}/rescan', spoiled(fc.record({ from: optional(fc.constantFrom(0, 100, 129, 130, 10_000_000)) }).map(defined), ['from'])],
  ];
  return new Map(bodies);
}
