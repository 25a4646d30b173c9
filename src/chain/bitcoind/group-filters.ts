/**
 * Which blocks a group of wallets must read in full: those without a filter, and those whose BIP158 filter
 * matches one of the group's scripts. The scripts of every wallet of the group are matched together, once per
 * filter; a read's filters are decoded once, so that scripts the wallets derive while its blocks are applied
 * (a block paid them) are matched without decoding the filters again.
 */
import { basicFilterMatchesAny, decodeBasicFilter, decodedFilterMatchesAny, SipMessages } from '../../core/bip158.js';
import { toHex } from '../../core/bytes.js';
import { PackedScripts, type ScriptList } from '../../core/script-list.js';
import type { WatchedScripts } from '../follower.js';
import type { BlockSummary } from '../types.js';

/** A group's scripts: `key` changes whenever they do (a wallet derived more); `derive` lists them all. */
export type GroupScripts = WatchedScripts;

export class GroupFilters {
  /** The group's scripts, and the same prepared for hashing with every block's filter key (in a few parts). */
  private scripts: { key: string; scripts: ScriptList; prepared: SipMessages[] } | undefined;
  /** The filter matches of the last summaries read, for the scripts they were computed with, and those summaries' filters decoded. */
  private lastMatches: { group: string; scripts: ScriptList; matched: Set<string>; decoded: Map<string, Float64Array> } | undefined;

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
      if (prepared.some((part) => decodedFilterMatchesAny(values, hash, part))) matched.add(hash);
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
      const added = addedTo(scripts, last.scripts);
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
  private scriptsOf(walletIds: readonly string[]): { scripts: ScriptList; prepared: SipMessages[] } {
    const group = this.scriptsOfGroup(walletIds);
    if (this.scripts?.key === group.key) return this.scripts;
    const scripts = group.derive();
    // A list grows by appending (a paid wallet derived more): only the scripts added are prepared, not the
    // 400,000 of 10,000 wallets again at each block that pays a few of them.
    const before = this.scripts;
    const appended = before !== undefined && before.prepared.length < PREPARED_PARTS_MAX && startsWith(scripts, before.scripts);
    const added = appended ? scriptsFrom(scripts, before.scripts.length) : [];
    const prepared = !appended ? [new SipMessages(scripts)] : added.length === 0 ? before.prepared : [...before.prepared, new SipMessages(added)];
    this.scripts = { key: group.key, scripts, prepared };
    return this.scripts;
  }
}

/** Parts a group's prepared scripts are kept in before they are prepared again as one. */
const PREPARED_PARTS_MAX = 16;

/** Whether `list` holds the very same scripts as `prefix` at its start (the same list grown, not equal bytes). */
function startsWith(list: ScriptList, prefix: ScriptList): boolean {
  if (prefix.length === 0 || prefix.length > list.length) return false;
  if (list instanceof PackedScripts) return list.grownFrom(prefix);
  if (!Array.isArray(list) || !Array.isArray(prefix)) return false;
  for (let i = 0; i < prefix.length; i++) if (list[i] !== prefix[i]) return false;
  return true;
}

/** The scripts of `list` from `start` on. */
const scriptsFrom = (list: ScriptList, start: number): Uint8Array[] => (list instanceof PackedScripts ? list.from(start) : [...list].slice(start));

/** The scripts of `list` that `earlier` lacks: those appended when it grew from it, else told apart by their bytes. */
function addedTo(list: ScriptList, earlier: ScriptList): Uint8Array[] {
  if (earlier.length === 0) return [...list];
  if (startsWith(list, earlier)) return scriptsFrom(list, earlier.length);
  const known = new Set(earlier.map(toHex));
  return [...list].filter((script) => !known.has(toHex(script)));
}
