/**
 * The client side of a SOCKS5 CONNECT (RFC 1928) without authentication. The target is always sent as a
 * domain name (address type 3), so the proxy resolves it: Tor needs that for .onion addresses, and no DNS
 * lookup leaks from this process.
 */
import type { Socket } from 'node:net';
import { ChainError } from '../types.js';

const VERSION = 5;
const NO_AUTH = 0;
const CMD_CONNECT = 1;
const ATYP_IPV4 = 1;
const ATYP_DOMAIN = 3;
const ATYP_IPV6 = 4;

/** The proxy's reply codes (RFC 1928 section 6), for the operator's log and message. */
const REPLY_TEXT: Record<number, string> = {
  1: 'general failure',
  2: 'connection not allowed by ruleset',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
};

/**
 * Runs the handshake on a socket already connected to the proxy. Resolves once the proxy reports the tunnel
 * open; any bytes that arrived after the reply are put back for the next reader.
 */
export async function socks5Connect(socket: Socket, host: string, port: number): Promise<void> {
  const name = Buffer.from(host, 'utf8');
  if (name.length === 0 || name.length > 255) throw proxyError('the server host name is too long for SOCKS5');
  const reader = new SocketReader(socket);
  try {
    socket.write(Buffer.from([VERSION, 1, NO_AUTH]));
    const greeting = await reader.read(2);
    if (greeting[0] !== VERSION) throw proxyError('the proxy does not speak SOCKS5');
    if (greeting[1] !== NO_AUTH) throw proxyError('the proxy requires authentication');

    const request = Buffer.alloc(7 + name.length);
    request.set([VERSION, CMD_CONNECT, 0, ATYP_DOMAIN, name.length], 0);
    name.copy(request, 5);
    request.writeUInt16BE(port, 5 + name.length);
    socket.write(request);

    const head = await reader.read(4);
    if (head[0] !== VERSION) throw proxyError('the proxy answered something that is not SOCKS5');
    const reply = head[1]!;
    if (reply !== 0) throw proxyError(`the proxy could not reach the server (${REPLY_TEXT[reply] ?? `reply ${reply}`})`);
    // The bound address that follows is of no use here, but must be read past.
    const addressType = head[3];
    let addressLength: number;
    if (addressType === ATYP_IPV4) addressLength = 4;
    else if (addressType === ATYP_IPV6) addressLength = 16;
    else if (addressType === ATYP_DOMAIN) addressLength = (await reader.read(1))[0]!;
    else throw proxyError('the proxy answered an unknown address type');
    await reader.read(addressLength + 2);
  } finally {
    reader.release();
  }
}

function proxyError(why: string): ChainError {
  return new ChainError('unreachable', `The SOCKS5 proxy failed: ${why}`, { retryable: true });
}

/** Reads exact byte counts from a socket in paused mode, then gives the socket back untouched. */
class SocketReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { length: number; resolve: (bytes: Buffer) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private readonly onData = (chunk: Buffer) => {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    this.settle();
  };
  private readonly onEnd = () => this.fail(proxyError('the proxy closed the connection'));
  private readonly onError = (error: NodeJS.ErrnoException) =>
    this.fail(error instanceof ChainError ? error : proxyError(`connection error ${error.code ?? ''}`.trim()));

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onEnd);
    socket.on('error', this.onError);
  }

  read(length: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.waiting = { length, resolve, reject };
      this.settle();
    });
  }

  release(): void {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    this.socket.off('error', this.onError);
    this.socket.pause();
    if (this.buffered.length > 0) this.socket.unshift(this.buffered);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.settle();
  }

  private settle(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    if (this.buffered.length >= waiting.length) {
      this.waiting = undefined;
      const bytes = this.buffered.subarray(0, waiting.length);
      this.buffered = this.buffered.subarray(waiting.length);
      waiting.resolve(bytes);
    } else if (this.failure) {
      this.waiting = undefined;
      waiting.reject(this.failure);
    }
  }
}
