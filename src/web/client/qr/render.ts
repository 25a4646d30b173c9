/// <reference lib="dom" />
// One frame string as a QR code: the module matrix (from the `qrcode` package), a plain RGBA raster of it, and
// drawing that raster onto a canvas. BBQr and uppercase UR use only the alphanumeric set, so they are encoded in
// alphanumeric mode (5.5 bits a character instead of 8), which is what both formats are designed for.
import QRCode, { type QRCodeSegment } from 'qrcode';

const ALPHANUMERIC = /^[0-9A-Z $%*+\-./:]*$/;

export interface QrMatrix {
  /** Modules per side. */
  readonly size: number;
  readonly version: number;
  isDark(row: number, col: number): boolean;
}

export interface QrMatrixOptions {
  /** Force this QR version (1..40), so that every frame of a series has the same size. */
  version?: number;
}

export function qrMatrix(text: string, options: QrMatrixOptions = {}): QrMatrix {
  const segment: QRCodeSegment = ALPHANUMERIC.test(text) ? { data: text, mode: 'alphanumeric' } : { data: new TextEncoder().encode(text), mode: 'byte' };
  const code = QRCode.create([segment], {
    errorCorrectionLevel: 'L',
    ...(options.version === undefined ? {} : { version: options.version }),
  });
  const { size, data } = code.modules;
  return { size, version: code.version, isDark: (row, col) => data[row * size + col] === 1 };
}

export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8ClampedArray<ArrayBuffer>;
}

/** Dark modules black on white, `scale` pixels each, with the 4-module quiet zone scanners need. */
export function rasterizeQr(matrix: QrMatrix, scale: number, quietZone = 4): RgbaImage {
  const side = (matrix.size + 2 * quietZone) * scale;
  const data = new Uint8ClampedArray(side * side * 4).fill(255);
  for (let row = 0; row < matrix.size; row++) {
    for (let col = 0; col < matrix.size; col++) {
      if (!matrix.isDark(row, col)) continue;
      for (let y = 0; y < scale; y++) {
        const start = (((row + quietZone) * scale + y) * side + (col + quietZone) * scale) * 4;
        for (let x = 0; x < scale * 4; x += 4) {
          data[start + x] = 0;
          data[start + x + 1] = 0;
          data[start + x + 2] = 0;
        }
      }
    }
  }
  return { width: side, height: side, data };
}

/** Draws one frame on a canvas, at a whole number of pixels a module so that edges stay sharp. */
export function drawQr(canvas: HTMLCanvasElement, text: string, targetPixels: number, options: QrMatrixOptions = {}): void {
  const matrix = qrMatrix(text, options);
  const scale = Math.max(1, Math.floor(targetPixels / (matrix.size + 8)));
  const image = rasterizeQr(matrix, scale);
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('this browser cannot draw on a canvas');
  context.putImageData(new ImageData(image.data, image.width, image.height), 0, 0);
}
