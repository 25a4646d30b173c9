/**
 * Learns that Bitcoin Core's mempool changed without waiting for the sync's interval: `getmempoolinfo` every
 * second, on a connection of its own (watch-loop.ts); a change of its count, size or total fee is told. Cheap
 * (a few numbers, whatever the mempool's size) where listing the mempool is not. A change it cannot see (one
 * transaction evicted as another of the same size and fee came) waits for the sync's interval, which stays.
 * Bitcoin Core's ZeroMQ notifications would tell each transaction; they need a node built and configured for them.
 */
import type { ChainWatch } from '../follower.js';
import type { RpcClientOptions } from './rpc-client.js';
import { expectObject } from './values.js';
import { watchLoop } from './watch-loop.js';

/** Between two looks at the mempool: how late an unconfirmed payment may show, at most, past the sync's own work. */
export const MEMPOOL_LOOK_MS = 1_000;

export function watchBitcoindMempool(options: RpcClientOptions, onChange: () => void): ChainWatch {
  let seen: string | undefined;
  return watchLoop({ ...options, timeoutMs: 10_000 }, async (rpc) => {
    const info = expectObject(await rpc.call('getmempoolinfo', [], { idempotent: true }), 'getmempoolinfo');
    // A replacement pays more fee than what it replaces, so it moves the total even at the same count and size.
    const state = `${String(info.size)} ${String(info.bytes)} ${String(info.total_fee)}`;
    // The first look is where the mempool stands: the sync reads that itself.
    if (seen !== undefined && state !== seen) onChange();
    seen = state;
    return MEMPOOL_LOOK_MS;
  });
}
