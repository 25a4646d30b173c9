// Node's native hex encoding, not a loop of `+=`: a string built piece by piece stays a chain of
// partial strings (32 bytes each, about 800 bytes for a txid instead of 80) until something flattens
// it, and wallets keep hundreds of thousands of txids and scripts.
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
}

/** Lower-case hex digit value, or -1. */
function digit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/** Bytes of lower-case hex text; throws on anything else (odd length, upper case, other characters). */
export function fromHex(text: string): Uint8Array {
  if (typeof text !== 'string' || text.length % 2 !== 0) throw new Error('Invalid hex: expected an even number of lower-case hex digits');
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = digit(text.charCodeAt(2 * i));
    const lo = digit(text.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new Error(`Invalid hex: unexpected character at position ${hi < 0 ? 2 * i : 2 * i + 1}`);
    out[i] = (hi << 4) | lo;
  }
  return out;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Scratch space for byte-reversed hex, grown as needed: one copy and one native encoding each. */
let reversed = Buffer.alloc(32);

/** Transaction ids are shown byte-reversed (as Bitcoin Core prints them); `start`/`end` pick a part of `bytes`. */
export function reverseHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const n = end - start;
  if (reversed.length < n) reversed = Buffer.alloc(n);
  for (let i = 0; i < n; i++) reversed[i] = bytes[end - 1 - i]!;
  return reversed.toString('hex', 0, n);
}

/**
 * Bytes as a string of one character per byte (latin1), what a held raw transaction is kept as: half the memory of
 * its hex, and compared with `===` like the hex. The hex is made again where it is shown or written. None of these
 * takes Buffer memory per call (scratch buffers instead): a load compares or converts hundreds of thousands of
 * transactions, and Node's pooled Buffers left that much more memory with the process after it.
 */
export const binaryOfBytes = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');

let binaryScratch = Buffer.alloc(4096);

export function hexOfBinary(binary: string): string {
  if (binaryScratch.length < binary.length) binaryScratch = Buffer.alloc(Math.max(binary.length, 2 * binaryScratch.length));
  const length = binaryScratch.write(binary, 0, 'latin1');
  return binaryScratch.toString('hex', 0, length);
}

export function bytesOfBinary(binary: string): Uint8Array {
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let decodedScratch = Buffer.alloc(4096);

/** Whether `hex` spells exactly the bytes of `binary` (digits of either case): decoded and compared natively. */
export function isHexOfBinary(hex: string, binary: string): boolean {
  if (hex.length !== binary.length * 2) return false;
  if (decodedScratch.length < binary.length || binaryScratch.length < binary.length) {
    decodedScratch = Buffer.alloc(Math.max(binary.length, 2 * decodedScratch.length));
    binaryScratch = Buffer.alloc(Math.max(binary.length, 2 * binaryScratch.length));
  }
  // Decoding stops at the first pair that is not hex: then fewer bytes than `binary` holds.
  if (decodedScratch.write(hex, 0, 'hex') !== binary.length) return false;
  binaryScratch.write(binary, 0, 'latin1');
  return decodedScratch.compare(binaryScratch, 0, binary.length, 0, binary.length) === 0;
}
