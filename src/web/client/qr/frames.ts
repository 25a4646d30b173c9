// What an animated QR shows for a PSBT, and how scanned strings are collected back into one, in the two formats
// air-gapped signers use: UR (crypto-psbt, fountain-coded) and BBQr. Pure: no DOM, no Node API.
import { BbqrError, bbqrJoin, bbqrSplit, checkBbqrPart, type BbqrHeader } from './bbqr.js';
import { UR_PSBT_TYPES, UrError, UrPsbtDecoder, urPsbtEncoder } from './ur.js';

export type QrFormat = 'ur' | 'bbqr';

/** Bytes of PSBT per UR part: about a version 12 QR code (65 modules), readable on a phone or a signer's camera. */
export const UR_MAX_FRAGMENT_LENGTH = 200;
/** The same density for BBQr: parts are sized for version 12 at error correction L (535 alphanumeric characters). */
export const BBQR_MAX_VERSION = 12;
/** 4 frames a second: the rate Coinkite recommends for the Coldcard Q, and comfortable for other signers' cameras. */
export const FRAME_INTERVAL_MS = 250;

const PSBT_MAGIC = [0x70, 0x73, 0x62, 0x74, 0xff];

export class QrScanError extends Error {
  override readonly name = 'QrScanError';
}

/** The frames of one PSBT in one format. `next()` never runs out: BBQr repeats its parts, UR keeps mixing. */
export interface FrameSource {
  readonly format: QrFormat;
  /** Frames in one pass over the data (1: a still image). */
  readonly cycleLength: number;
  /** For BBQr, the QR version every frame is rendered at so that the size never jumps. */
  readonly qrVersion?: number;
  next(): string;
}

export function psbtFrames(psbt: Uint8Array, format: QrFormat): FrameSource {
  if (!looksLikePsbt(psbt)) throw new QrScanError('the data is not a PSBT');
  if (format === 'bbqr') {
    const { parts, version } = bbqrSplit(psbt, 'P', { maxVersion: BBQR_MAX_VERSION, encoding: 'Z' });
    let at = 0;
    return {
      format,
      cycleLength: parts.length,
      qrVersion: version,
      next: () => parts[at++ % parts.length] as string,
    };
  }
  // Uppercase so that the QR code can use alphanumeric mode (BCR-2020-005); decoders read either case.
  const stream = urPsbtEncoder(psbt, UR_MAX_FRAGMENT_LENGTH);
  return { format, cycleLength: stream.pureParts, next: () => stream.nextPart().toUpperCase() };
}

/** The first `count` frames of a source (a full BBQr series, or UR's pure parts and then fountain parts). */
export function takeFrames(source: FrameSource, count: number): string[] {
  return Array.from({ length: count }, () => source.next());
}

export type ScanProgress =
  | { state: 'collecting'; format: QrFormat; received: number; total: number; fraction: number }
  | { state: 'complete'; format: QrFormat; psbt: Uint8Array };

/**
 * Takes scanned strings one at a time, in any order and with repeats, detects the format from the prefix and
 * reports progress until the PSBT is complete. A string of another series (a new BBQr header, a UR of another
 * message) starts over with that series, since the person has turned to another device or transaction.
 */
export class PsbtScanAccumulator {
  private bbqr?: { key: string; total: number; parts: Map<number, string> };
  private ur?: { key: string; decoder: UrPsbtDecoder };
  private done?: { state: 'complete'; format: QrFormat; psbt: Uint8Array };

  push(text: string): ScanProgress {
    const scanned = text.trim();
    if (this.done) return this.done;
    if (scanned.startsWith('B$')) return this.pushBbqr(scanned);
    if (scanned.slice(0, 3).toLowerCase() === 'ur:') return this.pushUr(scanned);
    throw new QrScanError('this QR code is neither a UR nor a BBQr code');
  }

  private pushBbqr(part: string): ScanProgress {
    let head: BbqrHeader;
    try {
      head = checkBbqrPart(part);
    } catch (error) {
      throw new QrScanError(error instanceof BbqrError ? error.message : 'this BBQr code does not decode');
    }
    if (head.fileType !== 'P') throw new QrScanError('this BBQr code holds something other than a PSBT');
    const key = part.slice(0, 6);
    if (this.bbqr?.key !== key) {
      this.bbqr = { key, total: head.total, parts: new Map() };
      this.ur = undefined;
    }
    const series = this.bbqr;
    series.parts.set(head.index, part);
    if (series.parts.size < series.total) {
      const received = series.parts.size;
      return { state: 'collecting', format: 'bbqr', received, total: series.total, fraction: received / series.total };
    }
    let data: Uint8Array;
    try {
      data = bbqrJoin([...series.parts.values()]).data;
    } catch (error) {
      this.bbqr = undefined;
      throw new QrScanError(error instanceof BbqrError ? error.message : 'the BBQr parts do not decode');
    }
    return this.finish('bbqr', data);
  }

  private pushUr(part: string): ScanProgress {
    const path = part.toLowerCase().split('/');
    const type = (path[0] as string).slice(3);
    if (!UR_PSBT_TYPES.has(type)) throw new QrScanError(`this UR holds a ${type || 'nameless'} type, not a PSBT`);
    // Multi-part strings say "seq-total"; a different total means a different message.
    const key = path.length === 3 ? `${type}/${path[1]?.split('-')[1]}` : `${type}/single`;
    if (this.ur?.key !== key) {
      this.ur = { key, decoder: new UrPsbtDecoder() };
      this.bbqr = undefined;
    }
    let { decoder } = this.ur;
    try {
      if (decoder.receive(part) === 'ignored') {
        // Same type and length, but another message (its checksum differs): start over with this one.
        decoder = new UrPsbtDecoder();
        this.ur = { key, decoder };
        decoder.receive(part);
      }
    } catch (error) {
      throw new QrScanError(error instanceof UrError ? error.message : 'the UR part does not decode');
    }
    let result: Uint8Array | undefined;
    try {
      result = decoder.result();
    } catch (error) {
      this.ur = undefined; // the collected parts contradict each other: start over
      throw new QrScanError(error instanceof UrError ? error.message : 'the UR parts do not decode');
    }
    if (result) return this.finish('ur', result);
    const total = decoder.expectedParts();
    return { state: 'collecting', format: 'ur', received: decoder.receivedParts(), total, fraction: decoder.progress() };
  }

  private finish(format: QrFormat, data: Uint8Array): ScanProgress {
    if (!looksLikePsbt(data)) {
      this.bbqr = undefined;
      this.ur = undefined;
      throw new QrScanError('the scanned data is not a PSBT');
    }
    this.done = { state: 'complete', format, psbt: data };
    return this.done;
  }
}

function looksLikePsbt(data: Uint8Array): boolean {
  return data.length > PSBT_MAGIC.length && PSBT_MAGIC.every((byte, i) => data[i] === byte);
}
