/**
 * The loop both of Bitcoin Core's watches run (tip-watch.ts, mempool-watch.ts): one call after another on a
 * client of their own, so that they never hold up the other calls; while the node is away it asks again less
 * and less often; stopping aborts the call in flight and the pause.
 */
import type { ChainWatch } from '../follower.js';
import { RpcClient, type RpcClientOptions } from './rpc-client.js';

/** Pauses after a failed call: doubled per failure, from the first to the last. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_LAST_MS = 30_000;

/**
 * Calls `step` until stopped; `step` answers how long to wait before the next call (0: at once). A step that
 * throws is the node away (or restarting): the next one comes after the backoff.
 */
export function watchLoop(options: RpcClientOptions & { timeoutMs: number }, step: (rpc: RpcClient) => Promise<number>): ChainWatch {
  const rpc = new RpcClient({ ...options, retries: 0 });
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
    let failures = 0;
    while (!stopped) {
      let waitMs: number;
      try {
        waitMs = await step(rpc);
        failures = 0;
      } catch {
        if (stopped) break;
        waitMs = Math.min(BACKOFF_FIRST_MS * 2 ** failures++, BACKOFF_LAST_MS);
      }
      if (waitMs > 0 && !stopped) await pause(waitMs);
    }
  };
  const running = run();
  return {
    async stop() {
      stopped = true;
      rpc.close(); // aborts the call in flight
      wake?.();
      await running.catch(() => undefined);
    },
  };
}
