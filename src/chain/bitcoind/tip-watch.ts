/**
 * Learns of Bitcoin Core's new blocks as they come: a long poll (`waitfornewblock` with the tip last seen, so a
 * block found between two polls is never missed) on a connection of its own, so that it never holds up the
 * other calls. While the node is away it asks again less and less often; stopping aborts the poll in flight.
 */
import type { TipWatch } from '../follower.js';
import type { ChainTip } from '../types.js';
import { RpcClient, type RpcClientOptions } from './rpc-client.js';
import { expectHash, expectInteger, expectObject } from './values.js';

/** How long one poll waits for a block before asking again (the node answers the current tip then). */
const WAIT_MS = 30_000;
/** Pauses after a failed poll: doubled per failure, from the first to the last. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_LAST_MS = 30_000;

export function watchBitcoindTip(options: RpcClientOptions, onTip: (tip: ChainTip) => void): TipWatch {
  // Its own client (and connection): the poll holds its connection for up to WAIT_MS.
  const rpc = new RpcClient({ ...options, timeoutMs: WAIT_MS + 10_000, retries: 0 });
  let stopped = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const run = async () => {
    let seen: string | undefined;
    let failures = 0;
    while (!stopped) {
      try {
        const params = seen === undefined ? [1] : [WAIT_MS, seen];
        const answer = expectObject(await rpc.call('waitfornewblock', params, { idempotent: true }), 'waitfornewblock');
        const tip = { height: expectInteger(answer.height, 'height'), hash: expectHash(answer.hash, 'block hash') };
        failures = 0;
        // The first answer is where the node stands: the sync reads that itself.
        if (seen !== undefined && tip.hash !== seen && !stopped) onTip(tip);
        seen = tip.hash;
      } catch {
        if (stopped) break;
        // The node is away (or restarting): ask again later, from the tip seen last, so that a block found
        // meanwhile is told at the first answer.
        await pause(Math.min(BACKOFF_FIRST_MS * 2 ** failures++, BACKOFF_LAST_MS));
      }
    }
  };
  const running = run();
  return {
    async stop() {
      stopped = true;
      rpc.close(); // aborts the poll in flight
      wake?.();
      await running.catch(() => undefined);
    },
  };
}
