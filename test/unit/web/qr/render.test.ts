// Every frame of a real PSBT drawn to pixels, read back by a QR decoder (jsQR, as the camera scanner does) and
// collected back into the same PSBT, in both formats.
import { describe, expect, it } from 'vitest';
import jsQRModule from 'jsqr';
import { PsbtScanAccumulator, psbtFrames, takeFrames, type QrFormat, type ScanProgress } from '../../../../src/web/client/qr/frames.js';
import { qrMatrix, rasterizeQr } from '../../../../src/web/client/qr/render.js';
import { loadFixture } from '../../../support/fixtures.js';

// jsqr is a CommonJS bundle with `exports.default`; depending on the loader the default import is the function
// or the exports object.
const jsQR = ((jsQRModule as any).default ?? jsQRModule) as typeof jsQRModule.default;
const psbts = loadFixture('psbts');
const psbtOf = (wallet: string, stage: number) => new Uint8Array(Buffer.from(psbts[wallet].stages[stage].psbt as string, 'base64'));

function scanPixels(frame: string, version?: number): { text: string; mode: string | undefined; size: number } {
  const matrix = qrMatrix(frame, version === undefined ? {} : { version });
  const image = rasterizeQr(matrix, 3);
  const code = jsQR(image.data, image.width, image.height, { inversionAttempts: 'dontInvert' });
  if (!code) throw new Error(`jsQR found no QR code in the rendered frame ${frame.slice(0, 24)}`);
  return { text: code.data, mode: code.chunks[0]?.type, size: matrix.size };
}

describe.each([
  ['w_wsh2of3', 2],
  ['w_tr', 0],
] as const)('the animated QR of the %s PSBT (stage %i)', (wallet, stage) => {
  const psbt = psbtOf(wallet, stage);

  it('BBQr: every frame decodes from its pixels, at one size, in alphanumeric mode, back to the PSBT', () => {
    const source = psbtFrames(psbt, 'bbqr');
    const frames = takeFrames(source, source.cycleLength);
    expect(new Set(frames).size).toBe(source.cycleLength);
    const accumulator = new PsbtScanAccumulator();
    let progress: ScanProgress | undefined;
    const sizes = new Set<number>();
    for (const frame of frames.reverse()) {
      const scanned = scanPixels(frame, source.qrVersion);
      expect(scanned.text).toBe(frame);
      expect(scanned.mode).toBe('alphanumeric');
      sizes.add(scanned.size);
      progress = accumulator.push(scanned.text);
    }
    expect(sizes.size).toBe(1);
    expect(progress).toEqual({ state: 'complete', format: 'bbqr', psbt });
  });

  it('UR: the pure frames, and fountain frames after the first cycle alone, decode from pixels to the PSBT', () => {
    const source = psbtFrames(psbt, 'ur');
    const firstCycle = takeFrames(source, source.cycleLength);
    const later = takeFrames(source, source.cycleLength * 4);
    for (const frames of [firstCycle, later.filter((_, i) => i % 2 === 0)]) {
      const accumulator = new PsbtScanAccumulator();
      let progress: ScanProgress | undefined;
      for (const frame of frames) {
        const scanned = scanPixels(frame);
        expect(scanned.text).toBe(frame);
        expect(scanned.mode).toBe('alphanumeric');
        progress = accumulator.push(scanned.text);
        if (progress.state === 'complete') break;
      }
      expect(progress).toEqual({ state: 'complete', format: 'ur' satisfies QrFormat, psbt });
    }
  });
});

describe('rasterizeQr', () => {
  it('draws dark modules black inside a white quiet zone', () => {
    const matrix = qrMatrix('B$2P0100AAAA');
    const image = rasterizeQr(matrix, 2);
    expect(image.width).toBe((matrix.size + 8) * 2);
    const pixel = (x: number, y: number) => image.data[(y * image.width + x) * 4];
    expect(pixel(0, 0)).toBe(255);
    // The top-left finder pattern starts dark at module (0, 0).
    expect(matrix.isDark(0, 0)).toBe(true);
    expect(pixel(8, 8)).toBe(0);
    expect(pixel(9, 9)).toBe(0);
  });

  it('uses byte mode for text outside the alphanumeric set', () => {
    const image = rasterizeQr(qrMatrix('ur:crypto-psbt/lower'), 3);
    const code = jsQR(image.data, image.width, image.height);
    expect(code?.data).toBe('ur:crypto-psbt/lower');
    expect(code?.chunks[0]?.type).toBe('byte');
  });
});
