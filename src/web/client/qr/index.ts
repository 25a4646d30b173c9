/// <reference lib="dom" />
// The animated-QR part of the browser code: show a PSBT to an air-gapped signer, and scan its answer back.
export { mountAnimatedQr, mountQrScanner } from './dom.js';
export { FRAME_INTERVAL_MS, type QrFormat } from './frames.js';
