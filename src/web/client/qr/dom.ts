/// <reference lib="dom" />
// The two widgets of the PSBT page: an animated QR code a signer scans (UR or BBQr), and a camera scanner that
// reads the signer's animated QR back. Elements carry `qr-*` classes for the page's stylesheet and set no inline
// style, so that they work under a strict Content-Security-Policy.
import jsQRModule from 'jsqr';
import { FRAME_INTERVAL_MS, PsbtScanAccumulator, QrScanError, psbtFrames, type FrameSource, type QrFormat } from './frames.js';
import { drawQr } from './render.js';

// jsqr is a CommonJS bundle with `exports.default`: a bundler hands over the function, Node's loader the object.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof jsQRModule.default;

/** Drawing-buffer pixels of the QR canvas; the stylesheet scales it to the space it has. */
const QR_PIXELS = 480;
/** Camera frames are scaled down to this width before decoding: enough for a QR filling part of the view. */
const SCAN_WIDTH = 640;
/** At most one decode per this many milliseconds, to leave the processor to the page. */
const SCAN_EVERY_MS = 80;
const FORMAT_NAMES: Record<QrFormat, string> = { ur: 'UR', bbqr: 'BBQr' };

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

let widgetCount = 0;

/**
 * Shows the PSBT as an animated QR code: frames change every FRAME_INTERVAL_MS, with a UR/BBQr choice, pause and
 * step controls and a frame counter. UR keeps producing new fountain parts after the first cycle, so a signer that
 * missed frames still completes; BBQr repeats its parts.
 */
export function mountAnimatedQr(container: HTMLElement, psbt: Uint8Array): void {
  const id = `qr-animated-${++widgetCount}`;
  const root = element('figure', 'qr-animated');
  const canvas = element('canvas', 'qr-canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'Animated QR code of the PSBT, for a signing device to scan');
  const caption = element('figcaption', 'qr-caption');
  const counter = element('span', 'qr-counter');
  counter.id = `${id}-counter`;
  canvas.setAttribute('aria-describedby', counter.id);
  const controls = element('div', 'qr-controls');
  const formats = element('fieldset', 'qr-formats');
  formats.append(element('legend', 'qr-legend', 'QR format'));
  const radios = new Map<QrFormat, HTMLInputElement>();
  for (const format of ['ur', 'bbqr'] as const) {
    const label = element('label', 'qr-format');
    const radio = element('input', 'qr-format-input');
    radio.type = 'radio';
    radio.name = `${id}-format`;
    radio.value = format;
    label.append(radio, ` ${FORMAT_NAMES[format]}`);
    formats.append(label);
    radios.set(format, radio);
  }
  const pause = element('button', 'qr-pause', 'Pause');
  pause.type = 'button';
  pause.setAttribute('aria-pressed', 'false');
  const step = element('button', 'qr-step', 'Next frame');
  step.type = 'button';
  step.disabled = true;
  controls.append(formats, pause, step);
  const message = element('p', 'qr-message');
  message.setAttribute('role', 'status');
  caption.append(counter);
  root.append(canvas, caption, controls, message);
  container.replaceChildren(root);

  let source: FrameSource | undefined;
  let shown = 0;
  let paused = false;
  let timer: ReturnType<typeof setInterval> | undefined;

  const show = () => {
    if (!source) return;
    const frame = source.next();
    shown++;
    drawQr(canvas, frame, QR_PIXELS, source.qrVersion === undefined ? {} : { version: source.qrVersion });
    const name = FORMAT_NAMES[source.format];
    const inCycle = ((shown - 1) % source.cycleLength) + 1;
    counter.textContent =
      source.cycleLength === 1
        ? `${name}: one frame`
        : source.format === 'bbqr'
          ? `${name}: part ${inCycle} of ${source.cycleLength}`
          : shown <= source.cycleLength
            ? `${name}: frame ${shown} of ${source.cycleLength}`
            : `${name}: extra frame ${shown - source.cycleLength} (fountain parts fill in missed frames)`;
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  const run = () => {
    stop();
    // The animation ends by itself once the widget has left the page.
    if (!paused && source && source.cycleLength > 1) timer = setInterval(() => (root.isConnected ? show() : stop()), FRAME_INTERVAL_MS);
  };
  const choose = (format: QrFormat) => {
    try {
      source = psbtFrames(psbt, format);
      message.textContent = '';
    } catch (error) {
      source = undefined;
      canvas.width = 0;
      counter.textContent = '';
      message.textContent = error instanceof Error ? `This PSBT cannot be shown as a QR code: ${error.message}.` : 'This PSBT cannot be shown as a QR code.';
    }
    shown = 0;
    const radio = radios.get(format);
    if (radio) radio.checked = true;
    // A still frame needs no animation controls.
    const still = !source || source.cycleLength === 1;
    pause.hidden = still;
    step.hidden = still;
    show();
    run();
  };

  for (const [format, radio] of radios) radio.addEventListener('change', () => radio.checked && choose(format));
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Play' : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    step.disabled = !paused;
    run();
  });
  step.addEventListener('click', show);
  choose('ur');
}

/**
 * Reads a signer's animated QR code (UR or BBQr) with the camera, shows progress, and hands the PSBT to `onPsbt`
 * once complete. The camera starts only when the person asks, and stops when done, on Stop, or when the widget
 * leaves the page. Without a usable camera it says why, and the page's file upload and paste remain.
 */
export function mountQrScanner(container: HTMLElement, onPsbt: (psbt: Uint8Array) => void): void {
  const root = element('section', 'qr-scanner');
  root.setAttribute('aria-label', 'Scan the signed PSBT from a signing device');
  const video = element('video', 'qr-video');
  video.muted = true;
  video.playsInline = true;
  video.setAttribute('aria-hidden', 'true');
  const grab = element('canvas', 'qr-grab');
  grab.hidden = true;
  const start = element('button', 'qr-start', 'Scan with camera');
  start.type = 'button';
  const stopButton = element('button', 'qr-stop', 'Stop camera');
  stopButton.type = 'button';
  stopButton.hidden = true;
  const progress = element('progress', 'qr-progress');
  progress.max = 1;
  progress.value = 0;
  progress.hidden = true;
  progress.setAttribute('aria-label', 'Scanned share of the PSBT');
  const status = element('p', 'qr-status');
  status.setAttribute('role', 'status');
  root.append(start, stopButton, video, grab, progress, status);
  container.replaceChildren(root);

  let stream: MediaStream | undefined;
  let frameRequest: number | undefined;
  let accumulator = new PsbtScanAccumulator();
  let lastText = '';
  let lastDecode = 0;

  const stopCamera = () => {
    if (frameRequest !== undefined) cancelAnimationFrame(frameRequest);
    frameRequest = undefined;
    for (const track of stream?.getTracks() ?? []) track.stop();
    stream = undefined;
    video.srcObject = null;
    video.hidden = true;
    start.hidden = false;
    stopButton.hidden = true;
  };

  const scan = (now: number) => {
    frameRequest = undefined;
    if (!root.isConnected) return stopCamera();
    if (!stream) return;
    frameRequest = requestAnimationFrame(scan);
    if (now - lastDecode < SCAN_EVERY_MS || video.readyState < video.HAVE_CURRENT_DATA || video.videoWidth === 0) return;
    lastDecode = now;
    const scale = Math.min(1, SCAN_WIDTH / video.videoWidth);
    const width = Math.round(video.videoWidth * scale);
    const height = Math.round(video.videoHeight * scale);
    grab.width = width;
    grab.height = height;
    const context = grab.getContext('2d', { willReadFrequently: true });
    if (!context) return;
    context.drawImage(video, 0, 0, width, height);
    const code = jsQR(context.getImageData(0, 0, width, height).data, width, height, { inversionAttempts: 'attemptBoth' });
    if (!code || code.data === lastText) return;
    lastText = code.data;
    try {
      const result = accumulator.push(code.data);
      if (result.state === 'complete') {
        stopCamera();
        progress.value = 1;
        status.textContent = `Scanned the signed PSBT (${FORMAT_NAMES[result.format]}).`;
        onPsbt(result.psbt);
        return;
      }
      progress.value = result.fraction;
      status.textContent = `${FORMAT_NAMES[result.format]}: ${result.received} of ${result.total} parts. Keep the code in view.`;
    } catch (error) {
      status.textContent = error instanceof QrScanError ? `${error.message}.` : 'This QR code could not be read.';
    }
  };

  start.addEventListener('click', async () => {
    if (!navigator.mediaDevices?.getUserMedia) {
      status.textContent =
        'This browser offers no camera here (it needs a secure connection, HTTPS or localhost). Upload the signed file or paste it instead.';
      return;
    }
    start.disabled = true;
    status.textContent = 'Starting the camera…';
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
    } catch (error) {
      start.disabled = false;
      const name = error instanceof DOMException ? error.name : '';
      status.textContent =
        name === 'NotAllowedError' || name === 'SecurityError'
          ? 'The camera was not allowed. Allow it in the browser settings, or upload the signed file or paste it instead.'
          : name === 'NotFoundError' || name === 'OverconstrainedError'
            ? 'No camera was found. Upload the signed file or paste it instead.'
            : 'The camera could not be started. Upload the signed file or paste it instead.';
      return;
    }
    start.disabled = false;
    if (!root.isConnected) return stopCamera();
    accumulator = new PsbtScanAccumulator();
    lastText = '';
    progress.value = 0;
    progress.hidden = false;
    video.hidden = false;
    start.hidden = true;
    stopButton.hidden = false;
    video.srcObject = stream;
    await video.play().catch(() => undefined); // muted inline video plays without a gesture; a refusal shows a still
    status.textContent = 'Hold the signing device\'s QR code in front of the camera.';
    frameRequest = requestAnimationFrame(scan);
  });
  stopButton.addEventListener('click', () => {
    stopCamera();
    status.textContent = 'Camera stopped.';
  });
  video.hidden = true;
}
