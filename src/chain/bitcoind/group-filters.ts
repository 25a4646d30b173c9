/**
 * Which blocks a group of wallets must read in full: those without a filter, and those whose BIP158 filter
 * matches one of the group's scripts. The scripts of every wallet of the group are matched together, once per
 * filter; a read's filters are decoded once, so that scripts the wallets derive while its blocks are applied
 * (a block paid them) are matched without decoding the filters again.
 */
import { basicFilterMatchesAny, decodeBasicFilter, decodedFilterMatchesAny, SipMessages } from '../../core/bip158.js';
import { toHex } from '../../core/bytes.js';
import type { WatchedScripts } from '../follower.js';
import type { BlockSummary } from '../types.js';

/** A group's scripts: `key` changes whenever they do (a wallet derived more); `derive` lists them all. */
export type GroupScripts = WatchedScripts;

export class GroupFilters {
  /** The group's scripts, and the same prepared for hashing with every block's filter key. */
  private scripts: { key: string; scripts: Uint8Array[]; prepared: SipMessages } | undefined;
  /** The filter matches of the last summaries read, for the scripts they were computed with, and those summaries' filters decoded. */
  private lastMatches: { group: string; scripts: Uint8Array[]; matched: Set<string>; decoded: Map<string, Float64Array> } | undefined;

  constructor(private readonly scriptsOfGroup: (walletIds: readonly string[]) => GroupScripts) {}

  /** The blocks of `summaries` the group must read in full: no filter, or a filter matching its scripts now. */
  blocksToFetch(walletIds: readonly string[], summaries: readonly BlockSummary[]): string[] {
    const { scripts, prepared } = this.scriptsOf(walletIds);
    const decoded = new Map<string, Float64Array>();
    const matched = new Set<string>();
    for (const { hash, filter } of summaries) {
      if (filter === null) continue;
      const values = decodeBasicFilter(filter);
      decoded.set(hash, values);
      if (decodedFilterMatchesAny(values, hash, prepared)) matched.add(hash);
    }
    this.lastMatches = { group: walletIds.join(' '), scripts, matched, decoded };
    return summaries.filter((s) => s.filter === null || matched.has(s.hash)).map((s) => s.hash);
  }

  /**
   * Whether the block's filter matches the group's scripts, reusing blocksToFetch's answer. Scripts derived
   * since are matched against every filter of that read at once; scripts are only ever added to a group, so
   * earlier matches stand (after a rescan, fewer scripts: an earlier match only costs a block read).
   */
  matches(walletIds: readonly string[], hash: string, filter: Uint8Array): boolean {
    const { scripts } = this.scriptsOf(walletIds);
    const last = this.lastMatches;
    if (!last?.decoded.has(hash) || last.group !== walletIds.join(' ')) return basicFilterMatchesAny(filter, hash, scripts);
    if (last.scripts !== scripts) {
      // Told apart only now that the scripts changed (rarely: a block paid the group), not on every read.
      const known = new Set(last.scripts.map(toHex));
      const added = scripts.filter((script) => !known.has(toHex(script)));
      last.scripts = scripts;
      if (added.length > 0) {
        const prepared = new SipMessages(added);
        for (const [blockHash, values] of last.decoded) {
          if (!last.matched.has(blockHash) && decodedFilterMatchesAny(values, blockHash, prepared)) last.matched.add(blockHash);
        }
      }
    }
    return last.matched.has(hash);
  }

  /** Every derived script of the group's wallets; derived again only when a wallet derived more. */
  private scriptsOf(walletIds: readonly string[]): { scripts: Uint8Array[]; prepared: SipMessages } {
    const group = this.scriptsOfGroup(walletIds);
    if (this.scripts?.key === group.key) return this.scripts;
    const scripts = group.derive();
    this.scripts = { key: group.key, scripts, prepared: new SipMessages(scripts) };
    return this.scripts;
  }
}
