/**
 * The scripts each group of wallets watches, kept from one request of the follower to the next. A group grows
 * by appending: a wallet that joins it (one just created reaching the tip) adds its scripts, a wallet that
 * derived more adds those, and nothing else is derived or copied but the list itself. Before, every request
 * derived the list of every wallet again and keyed it by every wallet's id: at 10,000 wallets (400,000
 * scripts) a few tenths of a second each time a wallet was added.
 */
import type { Branch } from '../../engine/index.js';
import type { WatchedScripts } from '../../chain/follower.js';
import { PackedScripts } from '../../core/script-list.js';

/** How many scripts of each branch a wallet derived, and its scripts (branch, from, count). */
export interface WatchedWallet {
  derived: readonly [number, number];
  derive(branch: Branch, fromIndex: number, count: number): Uint8Array[];
}

interface GroupList {
  /** The key's prefix, this list's own: keys of different lists never meet. */
  id: number;
  version: number;
  /** Per wallet of the list, the counts its scripts stand at. */
  counts: Map<string, [number, number]>;
  /**
   * Replaced whenever scripts are added (a version never changes: followers tell versions apart by identity
   * too), in one buffer the versions share: a view per script held for 400,000 scripts cost 40 MB.
   */
  scripts: PackedScripts;
  /** Scripts counted in the version but derived only when a follower asks for them (most keys are only compared). */
  pending: Array<() => Uint8Array[]>;
}

/** Lists kept: the groups of a pass (the wallets at the tip, a few catching up, those on their own). */
const LISTS_KEPT = 16;

export class WatchedScriptLists {
  /** Least recently used first. */
  private lists: GroupList[] = [];
  private nextId = 1;

  /** The scripts of the group `walletIds`, brought up to date with what each wallet derived. */
  scriptsOf(walletIds: readonly string[], walletOf: (id: string) => WatchedWallet): WatchedScripts {
    const list = this.listFor(walletIds);
    const added: Array<() => Uint8Array[]> = [];
    let rebuild = false;
    for (const id of walletIds) {
      const wallet = walletOf(id);
      const known = list.counts.get(id) ?? [0, 0];
      const [receive, change] = wallet.derived;
      if (receive < known[0] || change < known[1]) {
        rebuild = true; // fewer scripts (a rescan forgot some): the list is made again
        break;
      }
      const [from0, from1] = known;
      if (receive > from0) added.push(() => wallet.derive(0, from0, receive - from0));
      if (change > from1) added.push(() => wallet.derive(1, from1, change - from1));
      if (receive !== known[0] || change !== known[1] || !list.counts.has(id)) list.counts.set(id, [receive, change]);
    }
    if (rebuild) {
      this.lists = this.lists.filter((l) => l !== list);
      return this.scriptsOf(walletIds, walletOf);
    }
    if (added.length > 0 || list.version === 0) {
      list.pending.push(...added);
      list.version++;
    }
    return {
      key: `${list.id}:${list.version}`,
      derive: () => {
        // A version asked for late may hold scripts of a later one too: watching more only reads more blocks.
        if (list.pending.length > 0) list.scripts = list.scripts.concat(list.pending.splice(0).flatMap((derive) => derive()));
        return list.scripts;
      },
    };
  }

  /**
   * The largest kept list whose wallets are all in the group (lists only gain members: a wallet joining the
   * wallets at the tip), grown in place, or a new one. A list with a wallet the group lacks is not used: that
   * wallet's scripts would be watched too.
   */
  private listFor(walletIds: readonly string[]): GroupList {
    let best: GroupList | undefined;
    for (const list of this.lists) {
      if (list.counts.size > walletIds.length || (best && best.counts.size >= list.counts.size)) continue;
      if (this.within(list, walletIds)) best = list;
    }
    if (!best) best = { id: this.nextId++, version: 0, counts: new Map(), scripts: PackedScripts.of([]), pending: [] };
    this.lists = this.lists.filter((l) => l !== best).concat(best);
    if (this.lists.length > LISTS_KEPT) this.lists = this.lists.slice(this.lists.length - LISTS_KEPT);
    return best;
  }

  private within(list: GroupList, walletIds: readonly string[]): boolean {
    let found = 0;
    for (const id of walletIds) if (list.counts.has(id)) found++;
    return found === list.counts.size;
  }
}
