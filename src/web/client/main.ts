/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web interface's progressive script: pages work without it; with it, pages follow live
 * changes, copy buttons copy, form rows can be added and removed, fee estimates fill the fee
 * field, signed PSBT files are read into the upload form, and the PSBT page shows the animated QR
 * code and the camera scanner.
 */
import { watchLiveChanges } from './live.js';
import { enhanceForms } from './forms.js';
import { mountPsbtQr } from './psbt-qr.js';

function start(): void {
  enhanceForms(document);
  mountPsbtQr(document);
  const { liveUrl, liveFingerprint } = document.body.dataset;
  if (liveUrl && liveFingerprint !== undefined) watchLiveChanges(liveUrl, liveFingerprint);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
