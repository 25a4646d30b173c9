/**
 * PendingWalletChange: writing the changeset gathered from two leaves the same rows as writing the two one after
 * the other, checked against a model of the store's rules (an insert needs no row, an update or a removal needs one).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingWalletChange } from '../../../src/engine/changeset.js';
import type { StoredTransaction, WalletChangeset } from '../../../src/engine/types.js';

/** `earlier` and then `later` gathered as the sync service gathers a run's changes. */
function mergeWalletChangesets(earlier: WalletChangeset, later: WalletChangeset): WalletChangeset {
  const pending = new PendingWalletChange(earlier.walletId, earlier);
  pending.add(later);
  return pending.changeset();
}

const TXIDS = ['aa', 'bb', 'cc', 'dd', 'ee'].map((t) => t.repeat(32));

const row = (txid: string, version: number): StoredTransaction => ({
  walletId: 'w',
  txid,
  hex: `0${version}`,
  status: 'confirmed',
  blockHeight: version,
  blockHash: null,
  blockTime: null,
  firstSeen: 0,
  replaceable: null,
});

const sync = (height: number) => ({ walletId: 'w', tip: { height, hash: String(height).padStart(64, '0') }, lastUsedReceive: -1, lastUsedChange: -1 });

/** Writes a changeset to the model as the store does; throws where the store would fail. */
function write(rows: Map<string, StoredTransaction>, change: WalletChangeset): Map<string, StoredTransaction> {
  const next = new Map(rows);
  for (const txid of [...change.transactionsRemoved, ...change.transactionsUpdated.map((t) => t.txid)]) {
    if (!next.delete(txid)) throw new Error(`no row ${txid} to replace or remove`);
  }
  for (const t of [...change.transactionsAdded, ...change.transactionsUpdated]) {
    if (next.has(t.txid) && change.transactionsAdded.includes(t)) throw new Error(`row ${t.txid} exists`);
    next.set(t.txid, t);
  }
  return next;
}

/** A changeset valid on an engine holding `held`: adds what it lacks, updates or removes what it has. */
function changeOn(held: Set<string>, picks: Array<{ txid: string; removal: boolean }>, version: number): WalletChangeset {
  const change: WalletChangeset = { walletId: 'w', addressesAdded: [], transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [], sync: sync(version) };
  for (const { txid, removal } of new Map(picks.map((p) => [p.txid, p])).values()) {
    if (!held.has(txid)) change.transactionsAdded.push(row(txid, version));
    else if (removal) change.transactionsRemoved.push(txid);
    else change.transactionsUpdated.push(row(txid, version));
  }
  return change;
}

const after = (held: Set<string>, change: WalletChangeset) => {
  const next = new Set(held);
  for (const t of change.transactionsAdded) next.add(t.txid);
  for (const txid of change.transactionsRemoved) next.delete(txid);
  return next;
};

const picks = fc.array(fc.record({ txid: fc.constantFrom(...TXIDS), removal: fc.boolean() }), { maxLength: 5 });

describe('merging two changesets of a wallet', () => {
  it('leaves the rows of writing them one after the other, and the later sync row', () => {
    fc.assert(
      fc.property(fc.subarray(TXIDS), picks, picks, (stored, first, second) => {
        const rows = new Map(stored.map((txid) => [txid, row(txid, 0)]));
        const earlier = changeOn(new Set(stored), first, 1);
        const later = changeOn(after(new Set(stored), earlier), second, 2);
        const merged = mergeWalletChangesets(earlier, later);
        expect(write(rows, merged)).toEqual(write(write(rows, earlier), later));
        expect(merged.sync).toEqual(later.sync);
      }),
      { numRuns: 500 },
    );
  });

  it('writes nothing for a transaction added and removed before the write, and keeps both changes\' addresses', () => {
    const address = (index: number) => ({ walletId: 'w', branch: 0 as const, index, script: index.toString(16).padStart(2, '0') });
    const earlier: WalletChangeset = { walletId: 'w', addressesAdded: [address(0)], transactionsAdded: [row(TXIDS[0]!, 1)], transactionsUpdated: [], transactionsRemoved: [], sync: sync(1) };
    const later: WalletChangeset = { walletId: 'w', addressesAdded: [address(1)], transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [TXIDS[0]!], sync: sync(2) };
    const merged = mergeWalletChangesets(earlier, later);
    expect([merged.transactionsAdded, merged.transactionsUpdated, merged.transactionsRemoved]).toEqual([[], [], []]);
    expect(merged.addressesAdded.map((a) => a.index)).toEqual([0, 1]);
  });
});
