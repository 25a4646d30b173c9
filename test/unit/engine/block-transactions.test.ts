/**
 * The engine given blocks parsed for scanning (outputs decoded on demand, matched by script key first) writes
 * exactly the changesets it writes for fully parsed blocks, over the whole recorded timeline (payments, spends,
 * gap-limit extension, reorg, replacement), and keeps nothing of a block's bytes in a wallet's transactions.
 */
import { describe, expect, it } from 'vitest';
import { BlockTransaction, parseBlockForScan } from '../../../src/core/block.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { parseTransaction } from '../../../src/core/tx.js';
import { addWallet, applyUpdate, createEngineState, hexOf, removeWallet, type ChainUpdate } from '../../../src/engine/index.js';
import { scriptHolders } from '../../../src/engine/state.js';
import { loadFixture } from '../../support/fixtures.js';
import { freshEngine, timeline, updatesTo, walletConfigs } from './support/replay.js';

const rawBlocks = loadFixture<Record<string, { hex: string }>>('blocks');

/** The same update with the block parsed for scanning (a fresh parse each time: no state shared between runs). */
function scanned(update: ChainUpdate): ChainUpdate {
  if (update.type !== 'block_connected') return update;
  return { ...update, transactions: parseBlockForScan(fromHex(rawBlocks[update.hash]!.hex)).transactions };
}

describe('blocks parsed for scanning', () => {
  it('give the same changesets as fully parsed blocks at every update of the timeline', () => {
    const full = freshEngine();
    const lazy = freshEngine();
    let chain: string[] = [];
    let blocks = 0;
    let touched = 0;
    timeline.snapshots.forEach((snapshot: any, i: number) => {
      for (const update of updatesTo(chain, i)) {
        const expected = applyUpdate(full.state, update);
        const actual = applyUpdate(lazy.state, scanned(update));
        expect(actual).toEqual(expected);
        if (update.type === 'block_connected') {
          blocks++;
          if (expected.wallets.some((w) => w.transactionsAdded.length + w.transactionsUpdated.length > 0)) touched++;
        }
      }
      chain = snapshot.chain;
    });
    expect(blocks).toBeGreaterThan(10);
    expect(touched).toBeGreaterThan(3);
    for (const wallet of lazy.state.wallets.values()) {
      for (const tracked of wallet.txs.values()) {
        expect(tracked.tx).not.toBeInstanceOf(BlockTransaction);
        // Plain copies (text), the transaction's own outputs: nothing refers to the block's bytes.
        const outputs = tracked.tx.outputs.map(({ value, script }) => ({ value, script }));
        expect(outputs).toEqual(parseTransaction(hexOf(tracked)).outputs.map((o) => ({ value: o.value, script: toHex(o.script) })));
      }
    }
  });

  it('a script two wallets watch is still found after one of them is removed, and removing both leaves no key', () => {
    const config = walletConfigs()[0]!;
    const alone = createEngineState();
    addWallet(alone, config);
    const shared = createEngineState();
    addWallet(shared, { ...config, walletId: 'copy' });
    addWallet(shared, config);
    const scripts = [...shared.wallets.get(config.walletId)!.scripts.keys()];
    for (const script of scripts) expect(scriptHolders(shared, script)!.map((h) => h.wallet.walletId)).toEqual(['copy', config.walletId]);
    removeWallet(shared, 'copy');
    for (const script of scripts) expect(scriptHolders(shared, script)!.map((h) => h.wallet.walletId)).toEqual([config.walletId]);
    expect(shared.scriptKeys.size).toBe(alone.scriptKeys.size);
    let chain: string[] = [];
    timeline.snapshots.forEach((snapshot: any, i: number) => {
      for (const update of updatesTo(chain, i)) expect(applyUpdate(shared, scanned(update))).toEqual(applyUpdate(alone, scanned(update)));
      chain = snapshot.chain;
    });
    expect(shared.wallets.get(config.walletId)!.txs.size).toBeGreaterThan(0);
    removeWallet(shared, config.walletId);
    expect(shared.scriptIndex.size).toBe(0);
    expect(shared.scriptKeys.size).toBe(0);
  });
});
