/**
 * An HTTP proxy in front of a node's JSON-RPC that records every call passing through (batches counted call by
 * call), so that a test can tell what the service asked of a real node, and can act on the node just before a
 * call reaches it (`beforeForward`: e.g. mine a block right before the service reads the mempool).
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  params: unknown[];
}

export interface RpcCountingProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  calls: RecordedCall[];
  /** The calls of `method` recorded so far. */
  of(method: string): RecordedCall[];
  /** Awaited before a request's calls go on to the node. */
  beforeForward: ((calls: RecordedCall[]) => Promise<void>) | undefined;
  close(): Promise<void>;
}

export async function startRpcCountingProxy(target: string): Promise<RpcCountingProxy> {
  const node = new URL(target);
  const calls: RecordedCall[] = [];
  /** The request's calls, recorded. */
  const record = (body: Buffer): RecordedCall[] => {
    const recorded: RecordedCall[] = [];
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
        if (call && typeof call === 'object') {
          const { method, params } = call as { method?: unknown; params?: unknown };
          recorded.push({ method: String(method), params: Array.isArray(params) ? params : [] });
        }
      }
    } catch {
      recorded.push({ method: '(unparsable)', params: [] });
    }
    calls.push(...recorded);
    return recorded;
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') {
        const recorded = record(body);
        await proxy.beforeForward?.(recorded);
      }
      const forward = request(
        { host: node.hostname, port: node.port, method: req.method, path: req.url, headers: { ...req.headers, host: node.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: RpcCountingProxy = {
    url: `http://127.0.0.1:${port}`,
    calls,
    of: (method) => calls.filter((c) => c.method === method),
    beforeForward: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
