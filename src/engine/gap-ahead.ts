/**
 * What an update will make wallets derive, read before it is applied: the service derives those scripts ahead,
 * in parts, and applying the update then finds them derived (deriving is the slow part of a wide multisig).
 */
import { toHex } from '../core/bytes.js';
import { lastClaimed, mayBeWatched, scriptHolders, type EngineState } from './state.js';
import type { Branch, ChainUpdate } from './types.js';

/** Scripts a wallet's branch will hold after the update (indexes 0 .. count-1). */
export interface GapAhead {
  walletId: string;
  branch: Branch;
  count: number;
}

/**
 * Per wallet of `walletIds` and branch, the scripts its gap will need once the update's outputs paying it are
 * used, where that is more than it derived. Outputs paying scripts the update itself makes the wallet derive
 * are not followed: applying the update derives those (rarely more than a few).
 */
export function gapAheadOf(state: EngineState, update: ChainUpdate, walletIds: readonly string[]): GapAhead[] {
  if (update.type === 'block_disconnected') return [];
  const scope = new Set(walletIds);
  const highest = new Map<string, [number, number]>();
  const transactions = update.type === 'block_connected' ? update.transactions : update.transactions.map((entry) => entry.tx);
  for (const tx of transactions) {
    for (const output of tx.outputs) {
      if (!mayBeWatched(state, output.script)) continue;
      for (const { wallet, owner } of scriptHolders(state, toHex(output.script)) ?? []) {
        if (!scope.has(wallet.walletId)) continue;
        let used = highest.get(wallet.walletId);
        if (!used) highest.set(wallet.walletId, (used = [-1, -1]));
        used[owner.branch] = Math.max(used[owner.branch], owner.index);
      }
    }
  }
  const ahead: GapAhead[] = [];
  for (const [walletId, used] of highest) {
    const wallet = state.wallets.get(walletId)!;
    for (const branch of [0, 1] as const) {
      const count = Math.max(lastClaimed(wallet, branch), used[branch]) + 1 + wallet.gapLimit;
      if (count > wallet.derived[branch]) ahead.push({ walletId, branch, count });
    }
  }
  return ahead;
}
