// UR `crypto-psbt` (BC-UR 2, BCR-2020-005/006): the PSBT as one CBOR byte string, split by @ngraveio/bc-ur's
// fountain encoder into parts that can be shown forever and decoded from any sufficient subset, in any order.
import './node-globals.js';
import { Buffer } from 'buffer';
import { UR, URDecoder, UREncoder } from '@ngraveio/bc-ur';

/** The type hardware wallets read; BCR-2020-006 renamed it `psbt`, which is accepted when scanning too. */
export const UR_PSBT_TYPE = 'crypto-psbt';
export const UR_PSBT_TYPES: ReadonlySet<string> = new Set([UR_PSBT_TYPE, 'psbt']);

export class UrError extends Error {
  override readonly name = 'UrError';
}

/** An endless stream of UR parts for one PSBT: the pure parts first, then fountain-mixed ones. */
export interface UrPartStream {
  /** How many pure parts one full cycle has (1: a single static QR). */
  readonly pureParts: number;
  nextPart(): string;
}

export function urPsbtEncoder(psbt: Uint8Array, maxFragmentLength: number): UrPartStream {
  if (psbt.length === 0) throw new UrError('there is nothing to encode');
  if (!Number.isInteger(maxFragmentLength) || maxFragmentLength < 10) {
    throw new UrError('the fragment length must be an integer of at least 10');
  }
  const ur = new UR(Buffer.from(cborByteString(psbt)), UR_PSBT_TYPE);
  const encoder = new UREncoder(ur, maxFragmentLength, 0, Math.min(10, maxFragmentLength));
  return { pureParts: encoder.fragmentsLength, nextPart: () => encoder.nextPart() };
}

export type UrReceive = 'accepted' | 'ignored';

/** Collects scanned UR parts of one crypto-psbt until the PSBT can be rebuilt. */
export class UrPsbtDecoder {
  private decoder = new URDecoder();

  /** Feeds one scanned string: 'accepted' for a part of this message (a repeat adds nothing), 'ignored' for a
   * part of another message; throws for another UR type or a damaged part. */
  receive(part: string): UrReceive {
    const type = part.toLowerCase().split('/', 2)[0]?.slice(3) ?? '';
    if (!part.toLowerCase().startsWith('ur:') || !UR_PSBT_TYPES.has(type)) {
      throw new UrError(`a UR of type ${type || '(none)'} is not a PSBT`);
    }
    try {
      return this.decoder.receivePart(part) ? 'accepted' : 'ignored';
    } catch {
      throw new UrError('the UR part is damaged');
    }
  }

  /** 0..1, the share of the message's fragments the received parts already determine (repeats add nothing). */
  progress(): number {
    if (this.decoder.isComplete()) return 1;
    return Math.max(0, Math.min(1, this.decoder.getProgress()));
  }

  /** How many of the pure parts are known so far, received or solved from fountain parts. */
  receivedParts(): number {
    return this.decoder.isComplete() ? this.expectedParts() : this.decoder.receivedPartIndexes().length;
  }

  /** How many pure parts the message has (0 before the first multi-part string). */
  expectedParts(): number {
    return this.decoder.expectedPartCount();
  }

  /** The PSBT once every part is in (undefined before); throws when the parts did not add up. */
  result(): Uint8Array | undefined {
    if (this.decoder.isError()) throw new UrError('the UR parts do not add up to a valid message');
    if (!this.decoder.isComplete()) return undefined;
    return readCborByteString(new Uint8Array(this.decoder.resultUR().cbor));
  }
}

/** CBOR major type 2 (byte string) with a definite length, the whole content of a crypto-psbt UR. */
export function cborByteString(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  let head: number[];
  if (n < 24) head = [0x40 | n];
  else if (n < 0x100) head = [0x58, n];
  else if (n < 0x10000) head = [0x59, n >>> 8, n & 0xff];
  else if (n <= 0xffffffff) head = [0x5a, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  else throw new UrError('the PSBT is too large for a UR');
  const out = new Uint8Array(head.length + n);
  out.set(head, 0);
  out.set(bytes, head.length);
  return out;
}

export function readCborByteString(cbor: Uint8Array): Uint8Array {
  const first = cbor[0];
  if (first === undefined || first >> 5 !== 2) throw new UrError('the UR does not hold a CBOR byte string');
  const info = first & 0x1f;
  let length: number;
  let offset: number;
  if (info < 24) [length, offset] = [info, 1];
  else if (info === 24 && cbor.length >= 2) [length, offset] = [cbor[1] as number, 2];
  else if (info === 25 && cbor.length >= 3) [length, offset] = [((cbor[1] as number) << 8) | (cbor[2] as number), 3];
  else if (info === 26 && cbor.length >= 5) {
    length = new DataView(cbor.buffer, cbor.byteOffset + 1, 4).getUint32(0);
    offset = 5;
  } else throw new UrError('the UR holds a CBOR byte string of unsupported length encoding');
  if (offset + length !== cbor.length) throw new UrError('the CBOR byte string length does not match the UR');
  return cbor.slice(offset);
}
