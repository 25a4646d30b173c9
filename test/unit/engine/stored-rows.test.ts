/** Parsing a wallet's stored transaction rows: what the held transactions share. */
import { describe, expect, it } from 'vitest';
import { parseStoredTransactions } from '../../../src/engine/index.js';
import { allUpdates, applyAndPersist, freshEngine } from './support/replay.js';

function storedRows() {
  const { state, store, configs } = freshEngine();
  for (const { update } of allUpdates()) applyAndPersist(state, store, update);
  return store.rows(configs[0]!.walletId);
}

describe('stored transaction rows', () => {
  it('of one block share one block record; a row disagreeing on that block keeps its own values', () => {
    const rows = storedRows();
    const confirmed = rows.transactions.filter((t) => t.status === 'confirmed');
    expect(confirmed.length).toBeGreaterThan(2);
    const [first, second, third] = confirmed as [(typeof confirmed)[0], (typeof confirmed)[0], (typeof confirmed)[0]];
    const sameBlock = { ...second, blockHeight: first.blockHeight, blockHash: `${first.blockHash}`, blockTime: first.blockTime };
    const otherTime = { ...third, blockHeight: first.blockHeight, blockHash: first.blockHash, blockTime: first.blockTime! + 1 };

    const [a, b, c] = parseStoredTransactions(rows.sync.walletId, rows.sync.tip, [first, sameBlock, otherTime]);
    expect(b!.block).toBe(a!.block);
    expect(a!.block).toEqual({ height: first.blockHeight, hash: first.blockHash, time: first.blockTime });
    expect(c!.block).not.toBe(a!.block);
    expect(c!.block).toEqual({ height: first.blockHeight, hash: first.blockHash, time: first.blockTime! + 1 });
  });
});
