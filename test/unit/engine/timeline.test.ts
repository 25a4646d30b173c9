/**
 * The recorded Bitcoin Core timeline replayed through the engine for all seven wallets at once: at every
 * snapshot, balances, UTXOs and the transaction list equal what Core's own watch-only wallets reported.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { getBalances, listTransactions, listUnspent, walletSummary, type EngineState } from '../../../src/engine/index.js';
import { expectBalancesAndUtxos, expectTransactions } from './support/expected.js';
import { FIXTURE_WALLET_IDS } from './support/fixture-wallets.js';
import { applyAndPersist, freshEngine, timeline, updatesTo } from './support/replay.js';

const X = '688e6a883af3acac19e671abdfadfff2058c1b005d079d95c0053f283ef779ca';
const ORIGINAL = '79a09163dcf1550839f3f652848bec2da74000e447386580b66dc77250574830';
const REPLACEMENT = 'd576dc515fbe874dbd78d38f7009683ddbb2741440488b9e7f00d307db1a65f0';

function replay(onSnapshot: (index: number, state: EngineState) => void): void {
  const { state, store } = freshEngine();
  let chain: string[] = [];
  timeline.snapshots.forEach((snapshot: any, i: number) => {
    for (const update of updatesTo(chain, i)) applyAndPersist(state, store, update);
    chain = snapshot.chain;
    onSnapshot(i, state);
  });
}

describe('engine replaying the regtest timeline', () => {
  // Views are checked at each snapshot while the state is there; each snapshot reports as its own test.
  const checks = new Map<number, () => void>();
  beforeAll(() => {
    replay((index, state) => {
      const snapshot = timeline.snapshots[index];
      const mempool = new Set<string>(snapshot.mempool.map((m: any) => m.txid));
      const errors: unknown[] = [];
      for (const walletId of FIXTURE_WALLET_IDS) {
        try {
          expectBalancesAndUtxos(state, walletId, snapshot.expected[walletId]);
          expectTransactions(state, walletId, snapshot.expected[walletId], mempool);
        } catch (e) {
          errors.push(e);
        }
      }
      const facts = snapshotFacts(index, state);
      checks.set(index, () => {
        if (errors.length > 0) throw errors[0];
        facts();
      });
    });
  });

  timeline.snapshots.forEach((snapshot: any, index: number) => {
    it(`snapshot ${index} (${snapshot.description}): balances, UTXOs and transactions equal Core's`, () => {
      const check = checks.get(index);
      expect(check).toBeDefined();
      check!();
    });
  });
});

/** Facts about the special steps, captured at the snapshot (assertions run inside the test). */
function snapshotFacts(index: number, state: EngineState): () => void {
  const status = (walletId: string, txid: string) => listTransactions(state, walletId).find((e) => e.txid === txid);
  const facts = {
    wpkhLastUsed: walletSummary(state, 'w_wpkh').lastUsedReceive,
    wpkhDerived: walletSummary(state, 'w_wpkh').derivedReceive,
    x: status('w_pkh', X),
    pkhUtxos: listUnspent(state, 'w_pkh').map((u) => u.txid),
    original: status('w_wpkh', ORIGINAL),
    replacement: status('w_wpkh', REPLACEMENT),
    wpkhBalance: getBalances(state, 'w_wpkh'),
  };
  return () => {
    if (index >= 4) {
      // Receive index 19 and 30 in one transaction: found with a gap limit of 20 by re-checking the block.
      expect(facts.wpkhLastUsed).toBe(30);
      expect(facts.wpkhDerived).toBe(51);
    }
    if (index === 6) expect(facts.x).toMatchObject({ status: 'confirmed', blockHeight: 130, netSat: 70_000_000n });
    if (index >= 7) {
      // The reorg took X out of its block and Y double-spent it: w_pkh never received it.
      expect(facts.x).toBeUndefined();
      expect(facts.pkhUtxos).not.toContain(X);
    }
    if (index === 8) expect(facts.original).toMatchObject({ status: 'mempool', replaceable: 'yes', category: 'send', feeSat: 221n });
    if (index === 9) {
      expect(facts.original).toMatchObject({ status: 'dropped', conflicts: [REPLACEMENT], replaceable: 'unknown' });
      expect(facts.replacement).toMatchObject({ status: 'mempool', conflicts: [ORIGINAL], replaceable: 'yes', feeSat: 1326n });
    }
    if (index === 10) {
      expect(facts.original).toMatchObject({ status: 'dropped', conflicts: [REPLACEMENT] });
      expect(facts.replacement).toMatchObject({ status: 'confirmed', blockHeight: 132, replaceable: 'no' });
    }
  };
}
