/**
 * The Bitcoin Core tip watch against a JSON-RPC server that plays `waitfornewblock`: a new tip is told once,
 * the next poll names the tip seen last, a failed poll is tried again, and stopping ends a poll in flight.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBitcoindTip } from '../../../src/chain/bitcoind/tip-watch.js';
import type { ChainTip } from '../../../src/chain/types.js';

const hash = (n: number) => n.toString(16).padStart(64, '0');

interface Poll {
  params: unknown[];
  answer(result: { hash: string; height: number } | 'fail'): void;
}

async function fakeNode(): Promise<{ url: string; polls: Poll[]; next(): Promise<Poll>; server: Server }> {
  const polls: Poll[] = [];
  const waiting: Array<(poll: Poll) => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const call = JSON.parse(body);
      const poll: Poll = {
        params: call.params,
        answer: (result) => {
          if (result === 'fail') res.writeHead(500).end('{"result":null,"error":{"code":-1,"message":"down"},"id":' + JSON.stringify(call.id) + '}');
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result, error: null, id: call.id }));
        },
      };
      polls.push(poll);
      waiting.shift()?.(poll);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const seen = new Set<Poll>();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    polls,
    server,
    next: () => {
      const unseen = polls.find((p) => !seen.has(p));
      if (unseen) {
        seen.add(unseen);
        return Promise.resolve(unseen);
      }
      return new Promise((resolve) =>
        waiting.push((poll) => {
          seen.add(poll);
          resolve(poll);
        }),
      );
    },
  };
}

describe('Bitcoin Core tip watch', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('tells each new tip once, polls from the tip seen last, tries again after a failure, and stops a poll in flight', async () => {
    const node = await fakeNode();
    cleanups.push(() => new Promise((resolve) => node.server.close(() => resolve())));
    const told: ChainTip[] = [];
    const watch = watchBitcoindTip({ url: node.url, user: 'u', password: 'p' }, (tip) => told.push(tip));
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await watch.stop();
    });

    const first = await node.next();
    first.answer({ hash: hash(1), height: 1 }); // where the node stands: not news
    const second = await node.next();
    expect(second.params).toEqual([30_000, hash(1)]);
    second.answer({ hash: hash(2), height: 2 });
    const third = await node.next();
    expect(told).toEqual([{ hash: hash(2), height: 2 }]);
    expect(third.params).toEqual([30_000, hash(2)]);
    third.answer('fail');
    const fourth = await node.next(); // after a pause, from the same tip
    expect(fourth.params).toEqual([30_000, hash(2)]);
    fourth.answer({ hash: hash(2), height: 2 }); // the wait ran out: the same tip, not news
    await node.next(); // left unanswered: the poll in flight
    expect(told).toHaveLength(1);
    await watch.stop(); // would otherwise wait for the poll's 40 s deadline (past this test's timeout)
    stopped = true;
    expect(told).toHaveLength(1);
  });
});
