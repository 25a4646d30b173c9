/**
 * The JSON-RPC line reader of the Electrum client on a real socket, with a small line cap: a message longer than
 * the cap ends the connection with bad_response, whether it comes in one piece or many; a line split across
 * many chunks is read whole.
 */
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { RpcConnection } from '../../../../src/chain/electrum/json-rpc.js';
import type { ChainError } from '../../../../src/chain/types.js';
import { chainFailure } from '../../../support/chain-error.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

/** A server that answers every request line with what `reply` writes, and the client's RpcConnection to it. */
async function pair(reply: (socket: net.Socket, id: number) => void, maxLineBytes: number) {
  const server = net.createServer((socket) => {
    let text = '';
    socket.on('data', (data) => {
      text += data.toString();
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
        const { id } = JSON.parse(text.slice(0, end)) as { id: number };
        text = text.slice(end + 1);
        reply(socket, id);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const closed: ChainError[] = [];
  const connection = new RpcConnection(socket, { maxLineBytes, onNotification: () => undefined, onClose: (error) => closed.push(error), onStray: () => undefined });
  cleanups.push(() => socket.destroy());
  return { connection, closed };
}

it('reads a line that comes in many small writes', async () => {
  const { connection } = await pair((socket, id) => {
    const line = JSON.stringify({ jsonrpc: '2.0', result: 'x'.repeat(900), id }) + '\n';
    for (let i = 0; i < line.length; i += 7) socket.write(line.slice(i, i + 7));
  }, 1024);
  expect(await connection.request('blockchain.transaction.get', [], 5_000)).toBe('x'.repeat(900));
});

it('ends the connection with bad_response at a line over the cap, in one piece or growing without a newline', async () => {
  for (const write of [
    (socket: net.Socket, id: number) => socket.write(JSON.stringify({ result: 'x'.repeat(2000), id }) + '\n'),
    (socket: net.Socket) => {
      for (let i = 0; i < 40; i++) socket.write('x'.repeat(100));
    },
  ]) {
    const { connection, closed } = await pair(write, 1024);
    const error = await chainFailure(connection.request('blockchain.transaction.get', [], 5_000));
    expect(error.code).toBe('bad_response');
    expect(error.message).toBe('The Electrum server sent a message longer than 1024 bytes');
    expect(closed).toEqual([error]);
    expect(connection.closed).toBe(true);
  }
});
