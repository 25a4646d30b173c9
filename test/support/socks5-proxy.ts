/**
 * A tiny SOCKS5 proxy for tests (RFC 1928, CONNECT without authentication), on loopback. It records the
 * targets it was asked for, with their address type, so a test can tell that a client let the proxy resolve
 * a host name; `refuseWith` makes it answer a reply code instead of connecting.
 */
import net from 'node:net';

export interface Socks5Target {
  /** 1 IPv4, 3 domain name, 4 IPv6 */
  addressType: number;
  host: string;
  port: number;
}

export interface Socks5Proxy {
  /** `socks5://127.0.0.1:<port>` */
  url: string;
  readonly targets: Socks5Target[];
  /** A reply code (e.g. 5, connection refused) to answer instead of connecting; 0 connects. */
  refuseWith: number;
  close(): Promise<void>;
}

export async function startSocks5Proxy(): Promise<Socks5Proxy> {
  const sockets = new Set<net.Socket>();
  const state = {
    url: '',
    targets: [] as Socks5Target[],
    refuseWith: 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'open' = 'greeting';
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === 'greeting') {
        if (buffered.length < 2 || buffered.length < 2 + buffered[1]!) return;
        const version = buffered[0];
        const methods = buffered.subarray(2, 2 + buffered[1]!);
        buffered = buffered.subarray(2 + buffered[1]!);
        if (version !== 5 || !methods.includes(0)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 0]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buffered.length < 5) return;
        const addressType = buffered[3]!;
        const addressLength = addressType === 1 ? 4 : addressType === 4 ? 16 : 1 + buffered[4]!;
        if (buffered.length < 4 + addressLength + 2) return;
        const address = buffered.subarray(4, 4 + addressLength);
        const host = addressType === 3 ? address.subarray(1).toString('utf8') : addressType === 1 ? [...address].join('.') : address.toString('hex');
        const port = buffered.readUInt16BE(4 + addressLength);
        buffered = buffered.subarray(4 + addressLength + 2);
        state.targets.push({ addressType, host, port });
        stage = 'open';
        client.off('data', onData);
        client.pause();
        if (state.refuseWith !== 0) return void client.end(Buffer.from([5, state.refuseWith, 0, 1, 0, 0, 0, 0, 0, 0]));
        const upstream = net.connect({ host, port });
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
        upstream.once('connect', () => {
          client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
          if (buffered.length > 0) upstream.write(buffered);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `socks5://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return state;
}
