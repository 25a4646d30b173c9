// BBQr ("Better Bitcoin QR", Coinkite, public domain): a file split over a series of alphanumeric-mode QR codes,
// each carrying the 8-character header `B$` + encoding + file type + total (base 36) + index (base 36).
// Written against the specification (BBQr.md); the vectors it is tested with are in test/vectors/bbqr/.
import { base32, hex } from '@scure/base';
import { Inflate, deflateRaw } from 'pako';

export type BbqrEncoding = 'H' | '2' | 'Z';
export const BBQR_HEADER_LENGTH = 8;
export const BBQR_MAX_PARTS = 1295; // 'ZZ' in base 36
/** Zlib is fixed at a 1 KiB window (wbits=10) so that a hardware wallet needs little memory to inflate. */
const ZLIB_WINDOW_BITS = 10;
/** A PSBT a person signs is far below this; a larger inflated result is refused as a decompression bomb. */
export const BBQR_MAX_DECODED_BYTES = 8 * 1024 * 1024;

/** Alphanumeric characters a QR code of each version (index 1..40) holds at error correction level L (ISO 18004). */
export const QR_ALPHANUMERIC_CAPACITY_L: readonly number[] = [
  0, 25, 47, 77, 114, 154, 195, 224, 279, 335, 395, 468, 535, 619, 667, 758, 854, 938, 1046, 1153, 1249, 1352, 1460,
  1588, 1704, 1853, 1990, 2132, 2223, 2369, 2520, 2677, 2840, 3009, 3183, 3351, 3537, 3729, 3927, 4087, 4296,
];

export class BbqrError extends Error {
  override readonly name = 'BbqrError';
}

export interface BbqrSplitOptions {
  /** Largest QR version a part may need (1..40); the smallest version that holds every part is chosen. */
  maxVersion: number;
  /** 'Z' (default) compresses and falls back to '2' when compression does not make the data shorter. */
  encoding?: BbqrEncoding;
}

export interface BbqrSplit {
  /** QR version every part fits in, so that the whole series can be shown at one size. */
  version: number;
  encoding: BbqrEncoding;
  parts: string[];
}

export interface BbqrHeader {
  encoding: BbqrEncoding;
  fileType: string;
  total: number;
  index: number;
}

export function bbqrSplit(data: Uint8Array, fileType: string, options: BbqrSplitOptions): BbqrSplit {
  if (!/^[A-Z]$/.test(fileType)) throw new BbqrError('the file type must be one letter A-Z');
  const { maxVersion } = options;
  if (!Number.isInteger(maxVersion) || maxVersion < 1 || maxVersion > 40) {
    throw new BbqrError('the QR version must be an integer from 1 to 40');
  }
  if (data.length === 0) throw new BbqrError('there is nothing to encode');
  const { encoding, text } = encodeData(data, options.encoding ?? 'Z');
  const unit = encoding === 'H' ? 2 : 8; // every part but the last decodes to whole bytes

  for (let version = 1; version <= maxVersion; version++) {
    const room = capacity(version) - BBQR_HEADER_LENGTH;
    if (text.length <= room) return { version, encoding, parts: [header(encoding, fileType, 1, 0) + text] };
  }
  const room = capacity(maxVersion) - BBQR_HEADER_LENGTH;
  const perPartMax = room - (room % unit);
  if (perPartMax <= 0) throw new BbqrError(`a version ${maxVersion} QR code cannot hold a BBQr part`);
  // Balanced parts (no small runt at the end), each a multiple of the unit.
  const wanted = Math.ceil(text.length / perPartMax);
  const perPart = Math.ceil(text.length / wanted / unit) * unit;
  const total = Math.ceil(text.length / perPart);
  if (total > BBQR_MAX_PARTS) throw new BbqrError(`the data needs more than ${BBQR_MAX_PARTS} BBQr parts`);
  const parts: string[] = [];
  for (let index = 0; index < total; index++) {
    parts.push(header(encoding, fileType, total, index) + text.slice(index * perPart, (index + 1) * perPart));
  }
  return { version: maxVersion, encoding, parts };
}

/** Reads the header of one scanned string; undefined when it is not a BBQr part at all. */
export function parseBbqrHeader(part: string): BbqrHeader | undefined {
  const match = /^B\$([H2Z])([A-Z])([0-9A-Z]{2})([0-9A-Z]{2})/.exec(part);
  if (!match) return undefined;
  const total = Number.parseInt(match[3] as string, 36);
  const index = Number.parseInt(match[4] as string, 36);
  if (total < 1 || index >= total) return undefined;
  return { encoding: match[1] as BbqrEncoding, fileType: match[2] as string, total, index };
}

/** Reads one scanned part fully: its header, and a body of the characters its encoding allows. */
export function checkBbqrPart(part: string): BbqrHeader {
  const head = parseBbqrHeader(part);
  if (!head) throw new BbqrError('this BBQr code has a damaged header');
  const body = part.slice(BBQR_HEADER_LENGTH);
  const valid = head.encoding === 'H' ? /^(?:[0-9A-F]{2})*$/.test(body) : /^[A-Z2-7]*$/.test(body);
  if (!valid || body.length === 0) throw new BbqrError(`part ${head.index + 1} does not hold valid ${head.encoding === 'H' ? 'hex' : 'base32'} data`);
  return head;
}

/** Joins a complete set of parts (any order, repeats allowed when identical) back into the file. */
export function bbqrJoin(parts: readonly string[]): { fileType: string; encoding: BbqrEncoding; data: Uint8Array } {
  if (parts.length === 0) throw new BbqrError('no BBQr parts');
  const first = parts[0] as string;
  const head = parseBbqrHeader(first);
  if (!head) throw new BbqrError('not a BBQr part');
  const bodies = new Map<number, string>();
  for (const part of parts) {
    const h = parseBbqrHeader(part);
    if (!h || part.slice(0, 6) !== first.slice(0, 6)) {
      throw new BbqrError('the parts belong to different BBQr series');
    }
    const body = part.slice(BBQR_HEADER_LENGTH);
    const seen = bodies.get(h.index);
    if (seen !== undefined && seen !== body) throw new BbqrError(`part ${h.index + 1} was seen with two contents`);
    bodies.set(h.index, body);
  }
  const ordered: string[] = [];
  for (let i = 0; i < head.total; i++) {
    const body = bodies.get(i);
    if (body === undefined) throw new BbqrError(`part ${i + 1} of ${head.total} is missing`);
    ordered.push(body);
  }
  return { fileType: head.fileType, encoding: head.encoding, data: decodeParts(ordered, head.encoding) };
}

function capacity(version: number): number {
  return QR_ALPHANUMERIC_CAPACITY_L[version] as number;
}

function header(encoding: BbqrEncoding, fileType: string, total: number, index: number): string {
  return `B$${encoding}${fileType}${base36(total)}${base36(index)}`;
}

function base36(n: number): string {
  return n.toString(36).toUpperCase().padStart(2, '0');
}

function encodeData(data: Uint8Array, encoding: BbqrEncoding): { encoding: BbqrEncoding; text: string } {
  if (encoding === 'H') return { encoding, text: hex.encode(data).toUpperCase() };
  if (encoding === 'Z') {
    const compressed = deflateRaw(data, { level: 9, windowBits: ZLIB_WINDOW_BITS });
    if (compressed.length < data.length) return { encoding: 'Z', text: base32NoPad(compressed) };
  }
  return { encoding: '2', text: base32NoPad(data) };
}

function base32NoPad(data: Uint8Array): string {
  return base32.encode(data).replace(/=+$/, '');
}

function decodeParts(bodies: string[], encoding: BbqrEncoding): Uint8Array {
  const chunks = bodies.map((body, i) => {
    const last = i === bodies.length - 1;
    try {
      if (encoding === 'H') {
        if (body.length % 2 !== 0 || !/^[0-9A-F]*$/.test(body)) throw new Error('bad hex');
        return hex.decode(body.toLowerCase());
      }
      if (!/^[A-Z2-7]*$/.test(body) || (!last && body.length % 8 !== 0)) throw new Error('bad base32');
      return base32.decode(body + '='.repeat((8 - (body.length % 8)) % 8));
    } catch {
      throw new BbqrError(`part ${i + 1} does not hold valid ${encoding === 'H' ? 'hex' : 'base32'} data`);
    }
  });
  const joined = concat(chunks);
  return encoding === 'Z' ? inflateLimited(joined) : joined;
}

function inflateLimited(compressed: Uint8Array): Uint8Array {
  const inflator = new Inflate({ raw: true, windowBits: ZLIB_WINDOW_BITS });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  inflator.onData = (chunk: Uint8Array) => {
    size += chunk.length;
    if (size > BBQR_MAX_DECODED_BYTES) tooLarge = true;
    else chunks.push(chunk);
  };
  // Fed in slices so that a decompression bomb stops early instead of inflating to the end.
  const slice = 4096;
  for (let at = 0; at < compressed.length && !tooLarge && !inflator.ended; at += slice) {
    if (!inflator.push(compressed.subarray(at, at + slice), at + slice >= compressed.length)) break;
  }
  if (tooLarge) throw new BbqrError('the decompressed data is too large');
  if (inflator.err !== 0 || !inflator.ended) throw new BbqrError('the compressed data is damaged');
  return concat(chunks);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
