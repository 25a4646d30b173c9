/**
 * Learns of Bitcoin Core's new blocks as they come: a long poll (`waitfornewblock` with the tip last seen, so a
 * block found between two polls is never missed) on a connection of its own (watch-loop.ts).
 */
import type { ChainWatch } from '../follower.js';
import type { ChainTip } from '../types.js';
import type { RpcClientOptions } from './rpc-client.js';
import { expectHash, expectInteger, expectObject } from './values.js';
import { watchLoop } from './watch-loop.js';

/** How long one poll waits for a block before asking again (the node answers the current tip then). */
const WAIT_MS = 30_000;

export function watchBitcoindTip(options: RpcClientOptions, onTip: (tip: ChainTip) => void): ChainWatch {
  // After a failure the next poll asks from the tip seen last, so that a block found meanwhile is told at once.
  let seen: string | undefined;
  // The poll holds its connection for up to WAIT_MS.
  return watchLoop({ ...options, timeoutMs: WAIT_MS + 10_000 }, async (rpc) => {
    const params = seen === undefined ? [1] : [WAIT_MS, seen];
    const answer = expectObject(await rpc.call('waitfornewblock', params, { idempotent: true }), 'waitfornewblock');
    const tip = { height: expectInteger(answer.height, 'height'), hash: expectHash(answer.hash, 'block hash') };
    // The first answer is where the node stands: the sync reads that itself.
    if (seen !== undefined && tip.hash !== seen) onTip(tip);
    seen = tip.hash;
    return 0;
  });
}
