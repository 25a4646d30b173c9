/** A real HTTP receiver for webhook deliveries (on 127.0.0.1), the documented verification recipe, an SSE reader. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** The status the receiver answered. */
  answered: number;
}

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** Status to answer the n-th request (0-based) with; default 200. */
  answer: (n: number) => number;
  /** Resolves when at least `count` requests arrived (polls; the caller's test timeout bounds it). */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    deliveries: [],
    answer: () => 200,
    async waitFor(count) {
      while (receiver.deliveries.length < count) await new Promise((r) => setTimeout(r, 50));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const answered = receiver.answer(receiver.deliveries.length);
      receiver.deliveries.push({ headers: req.headers, raw, body: JSON.parse(raw), answered });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/** The verification recipe of docs/webhooks.md, as a receiver would write it. */
export function verifySignature(secret: string, headers: IncomingHttpHeaders, rawBody: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const timestamp = headers['x-wcs-timestamp'];
  const signature = headers['x-wcs-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
  return expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
}

export interface SseMessage {
  id: string;
  event: string;
  data: any;
}

/** Reads a server-sent event stream until `count` messages arrived, then closes it. */
export async function readStream(url: string, headers: Record<string, string>, count: number, onOpen?: () => Promise<void>): Promise<{ status: number; messages: SseMessage[] }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status !== 200 || !response.body) {
    await response.text();
    return { status: response.status, messages: [] };
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const messages: SseMessage[] = [];
  let buffer = '';
  let opened = false;
  while (messages.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!opened && block.startsWith(':')) {
        opened = true;
        await onOpen?.();
        continue;
      }
      const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      if (fields.data !== undefined) messages.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) });
    }
  }
  controller.abort();
  return { status: 200, messages };
}
