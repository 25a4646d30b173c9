/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Mounts the animated QR code of a PSBT (UR crypto-psbt and BBQr) and the camera scanner of a
 * device's signed copy, where the PSBT page offers their places. The scanner's result goes into the
 * signed-PSBT form, which is then sent.
 */
import { mountAnimatedQr, mountQrScanner } from './qr/index.js';

function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function mountPsbtQr(root: ParentNode): void {
  for (const container of root.querySelectorAll<HTMLElement>('[data-animated-qr]')) {
    const base64 = container.dataset.psbtBase64;
    if (base64) mountAnimatedQr(container, base64ToBytes(base64));
  }
  for (const container of root.querySelectorAll<HTMLElement>('[data-qr-scanner]')) {
    mountQrScanner(container, (psbt) => {
      const form = container.closest('form');
      const text = form?.querySelector<HTMLTextAreaElement>('textarea[name=psbt]');
      if (!form || !text) return;
      text.value = [text.value.trim(), bytesToBase64(psbt)].filter((c) => c !== '').join('\n');
      form.requestSubmit();
    });
  }
}
