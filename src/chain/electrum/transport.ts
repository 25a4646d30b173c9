/**
 * Opens the byte stream to an Electrum server: plain TCP (`tcp://host:port`) or TLS (`ssl://host:port`), directly
 * or through a SOCKS5 proxy (`socks5://host:port`, e.g. Tor). TLS is checked against the system's certificate
 * authorities, or, when a fingerprint is pinned, against that SHA-256 certificate fingerprint alone (home servers
 * with a self-signed certificate). Failures are ChainErrors whose messages never name the server's address.
 */
import net from 'node:net';
import tls from 'node:tls';
import { ChainError } from '../types.js';
import { socks5Connect } from './socks5.js';

export interface Endpoint {
  host: string;
  port: number;
  tls: boolean;
}

export interface TransportOptions {
  endpoint: Endpoint;
  /** Pinned SHA-256 fingerprint of the server certificate: 64 hex digits, lower case, no colons. */
  fingerprint?: string;
  proxy?: { host: string; port: number };
  /** Deadline for the whole opening (TCP, proxy handshake, TLS handshake). */
  timeoutMs: number;
  /** Abandons the opening (the client was closed meanwhile). */
  signal?: AbortSignal;
}

/** Parses `tcp://host:port` or `ssl://host:port` (`tls://` is taken as `ssl://`). */
export function parseServerUrl(url: string): Endpoint {
  const match = /^(tcp|ssl|tls):\/\/(\[[0-9a-fA-F:.]+\]|[^:/?#\s]+):(\d{1,5})\/?$/i.exec(url.trim());
  const port = match ? Number(match[3]) : 0;
  if (!match || port < 1 || port > 65_535) {
    throw new ChainError('bad_config', 'The Electrum server url must look like tcp://host:port or ssl://host:port');
  }
  return { host: match[2]!.replace(/^\[|\]$/g, ''), port, tls: match[1]!.toLowerCase() !== 'tcp' };
}

/** Parses `socks5://host:port` (`socks5h://` is the same: the proxy always resolves names here). */
export function parseProxyUrl(url: string): { host: string; port: number } {
  const match = /^socks5h?:\/\/(\[[0-9a-fA-F:.]+\]|[^:/?#\s@]+):(\d{1,5})\/?$/i.exec(url.trim());
  const port = match ? Number(match[2]) : 0;
  if (!match || port < 1 || port > 65_535) {
    throw new ChainError('bad_config', 'The Electrum proxy must look like socks5://host:port');
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** Normalises a pinned fingerprint (hex, colons or spaces allowed) to 64 lower-case hex digits. */
export function parseFingerprint(text: string): string {
  const hex = text.replace(/[:\s]/g, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new ChainError('bad_config', 'The Electrum TLS fingerprint must be a SHA-256 fingerprint: 64 hex digits, colons allowed');
  }
  return hex;
}

/** Opens the stream; the returned socket is connected, handshaken and verified. */
export async function openTransport(options: TransportOptions): Promise<net.Socket> {
  const { endpoint, proxy } = options;
  let raw: net.Socket | undefined;
  let secure: tls.TLSSocket | undefined;
  const abandon = (error: ChainError) => {
    secure?.destroy(error);
    raw?.destroy(error);
  };
  const timer = setTimeout(
    () => abandon(new ChainError('timeout', 'The Electrum server did not answer the connection in time', { retryable: true })),
    options.timeoutMs,
  );
  const onAbort = () => abandon(new ChainError('unreachable', 'The Electrum client was closed'));
  options.signal?.addEventListener('abort', onAbort);
  try {
    if (options.signal?.aborted) throw new ChainError('unreachable', 'The Electrum client was closed');
    raw = await connectTcp(proxy ?? endpoint, proxy !== undefined, (socket) => (raw = socket));
    if (proxy) await socks5Connect(raw, endpoint.host, endpoint.port);
    if (!endpoint.tls) return raw;
    secure = tls.connect({
      socket: raw,
      // The name the certificate must carry (through a proxy the socket knows only the proxy's address).
      host: endpoint.host,
      // SNI only for names, as TLS requires.
      servername: net.isIP(endpoint.host) ? undefined : endpoint.host,
      ...(options.fingerprint
        ? { rejectUnauthorized: false, checkServerIdentity: () => undefined }
        : { rejectUnauthorized: true, ca: systemCertificates() }),
    });
    await handshake(secure, options.fingerprint);
    return secure;
  } catch (error) {
    secure?.destroy();
    raw?.destroy();
    throw asChainError(error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function connectTcp(target: { host: string; port: number }, isProxy: boolean, opened: (socket: net.Socket) => void): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.host, port: target.port });
    opened(socket);
    socket.setNoDelay(true);
    const onError = (error: Error) => {
      socket.destroy();
      reject(isProxy && !(error instanceof ChainError) ? proxyConnectError(error) : error);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

function handshake(socket: tls.TLSSocket, fingerprint: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      socket.off('error', onError);
      if (fingerprint) {
        const presented = socket.getPeerCertificate().fingerprint256?.replace(/:/g, '').toLowerCase();
        if (presented !== fingerprint) {
          socket.destroy();
          reject(new ChainError('unreachable', "The Electrum server's TLS certificate does not match the pinned fingerprint"));
          return;
        }
      } else if (!socket.authorized) {
        socket.destroy();
        reject(tlsRefused(String(socket.authorizationError ?? 'not trusted')));
        return;
      }
      resolve();
    });
  });
}

let systemCa: string[] | undefined;
/** The system's trust store together with Node's bundled one (a private CA installed on the host is honoured). */
function systemCertificates(): string[] {
  if (!systemCa) {
    const get = (tls as unknown as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
    let system: string[] = [];
    try {
      system = get ? get('system') : [];
    } catch {
      system = [];
    }
    systemCa = [...new Set([...tls.rootCertificates, ...system])];
  }
  return systemCa;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO|HOSTNAME|ALTNAME|SSL|TLS/i;

function tlsRefused(code: string): ChainError {
  return new ChainError('unreachable', `The Electrum server's TLS certificate is not trusted (${code}); pin its fingerprint to trust a self-signed certificate`);
}

function proxyConnectError(error: NodeJS.ErrnoException): ChainError {
  return new ChainError('unreachable', `The SOCKS5 proxy is unreachable (${error.code ?? 'connection failed'})`, { retryable: true });
}

/** Maps a socket failure to its ChainError; messages carry the error code, never the address. */
export function asChainError(error: unknown): ChainError {
  if (error instanceof ChainError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (code === 'ECONNREFUSED') return new ChainError('connection_refused', 'The Electrum server refused the connection', { retryable: true });
  if (code === 'ETIMEDOUT') return new ChainError('timeout', 'The Electrum server did not answer the connection in time', { retryable: true });
  if (TLS_CODES.test(code) || code === 'DEPTH_ZERO_SELF_SIGNED_CERT') return tlsRefused(code);
  return new ChainError('unreachable', `The Electrum server is unreachable (${code || 'connection failed'})`, { retryable: true });
}
