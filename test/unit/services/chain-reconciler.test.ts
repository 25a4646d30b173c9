/** The rules by which the chain settles a pending PSBT, on real transactions of the fixture timeline. */
import { describe, expect, it } from 'vitest';
import type { CoinTx } from '../../../src/engine/index.js';
import { PsbtChainReconciler } from '../../../src/services/psbts/chain-reconciler.js';
import { unsignedTxid } from '../../../src/services/psbts/unsigned-txid.js';
import { timeline } from '../engine/support/replay.js';

const hex: string = timeline.snapshots[8].mempool[0].hex;
const txid: string = timeline.snapshots[8].mempool[0].txid;
const ours = unsignedTxid(hex);
const someone = 'ab'.repeat(32);
const tx = (status: CoinTx['status'], id = txid): CoinTx => ({ txid: id, status, hex });
const funded = tx('confirmed', 'cd'.repeat(32));
const coin = (spenders: CoinTx[], funding: CoinTx | null = funded, fundingRemoved = false) => ({ funding: funding ?? undefined, spenders, fundingRemoved });

describe('what the chain says of a pending PSBT', () => {
  const reconciler = new PsbtChainReconciler(Date.now);

  it('broadcast once its transaction spends a coin, in the mempool or in a block', () => {
    expect(reconciler.verdict(ours, [coin([tx('mempool')])])).toBe('broadcast');
    expect(reconciler.verdict(ours, [coin([]), coin([tx('confirmed')])])).toBe('broadcast');
  });

  it('invalid when another transaction spending a coin confirmed, or the coin itself is gone', () => {
    expect(reconciler.verdict(someone, [coin([]), coin([tx('confirmed')])])).toBe('invalid');
    expect(reconciler.verdict(someone, [coin([], tx('dropped', 'cd'.repeat(32)))])).toBe('invalid');
    expect(reconciler.verdict(someone, [coin([], null, true)])).toBe('invalid');
  });

  it('pending while another spend is only in the mempool, a spend was dropped, or a coin is merely not in view', () => {
    expect(reconciler.verdict(someone, [coin([tx('mempool')])])).toBeUndefined();
    expect(reconciler.verdict(ours, [coin([tx('dropped')])])).toBeUndefined();
    expect(reconciler.verdict(someone, [coin([], null, false)])).toBeUndefined();
    expect(reconciler.verdict(someone, [coin([])])).toBeUndefined();
  });
});
