/**
 * Replays the recorded Bitcoin Core timeline through the engine: along each snapshot's active chain
 * (disconnecting back to the fork point when the chain changed), then the snapshot's mempool.
 * Also a minimal in-memory row store that applies changesets the way a real store would.
 */
import { parseBlock, parseTransaction, type Block } from '../../../../src/core/tx.js';
import {
  addWallet,
  applyUpdate,
  createEngineState,
  type ChainUpdate,
  type EngineChangeset,
  type EngineState,
  type StoredAddress,
  type StoredTransaction,
  type StoredWalletRows,
  type StoredWalletSync,
  type WalletConfig,
} from '../../../../src/engine/index.js';
import { loadFixture } from '../../../support/fixtures.js';
import { FIXTURE_WALLET_IDS, fixtureDeriver } from './fixture-wallets.js';

export const timeline = loadFixture('timeline');
const rawBlocks = loadFixture('blocks') as Record<string, { height: number; prev: string | null; time: number; hex: string }>;

const parsed = new Map<string, Block & { height: number }>();
export function blockByHash(hash: string): Block & { height: number } {
  let block = parsed.get(hash);
  if (!block) {
    const raw = rawBlocks[hash];
    if (!raw) throw new Error(`no block ${hash} in the fixture`);
    block = { ...parseBlock(raw.hex), height: raw.height };
    if (block.hash !== hash) throw new Error(`block ${hash} hashes to ${block.hash}`);
    parsed.set(hash, block);
  }
  return block;
}

export const connected = (hash: string): ChainUpdate => {
  const b = blockByHash(hash);
  return { type: 'block_connected', height: b.height, hash: b.hash, prevHash: b.prevHash, time: b.time, transactions: b.transactions };
};
export const disconnected = (hash: string): ChainUpdate => {
  const b = blockByHash(hash);
  return { type: 'block_disconnected', height: b.height, hash: b.hash, prevHash: b.prevHash };
};
export const mempoolOf = (snapshot: any): ChainUpdate => ({
  type: 'mempool',
  transactions: snapshot.mempool.map((m: any) => ({ tx: parseTransaction(m.hex), txid: m.txid, time: m.time })),
});

/** The updates that take a follower from `fromChain` to snapshot `index` (blocks, then the mempool). */
export function updatesTo(fromChain: string[], index: number): ChainUpdate[] {
  const snapshot = timeline.snapshots[index];
  const chain: string[] = snapshot.chain;
  let fork = 0;
  while (fork < fromChain.length && fork < chain.length && fromChain[fork] === chain[fork]) fork++;
  const updates: ChainUpdate[] = [];
  for (let h = fromChain.length - 1; h >= fork; h--) updates.push(disconnected(fromChain[h]!));
  for (let h = fork; h < chain.length; h++) updates.push(connected(chain[h]!));
  updates.push(mempoolOf(snapshot));
  return updates;
}

/** Every update of the whole timeline, with the snapshot index reached after the last update of each. */
export function allUpdates(): { update: ChainUpdate; snapshotDone: number | null }[] {
  const out: { update: ChainUpdate; snapshotDone: number | null }[] = [];
  let chain: string[] = [];
  timeline.snapshots.forEach((snapshot: any, i: number) => {
    const updates = updatesTo(chain, i);
    updates.forEach((update, j) => out.push({ update, snapshotDone: j === updates.length - 1 ? i : null }));
    chain = snapshot.chain;
  });
  return out;
}

export function walletConfigs(gapLimit = 20): WalletConfig[] {
  return FIXTURE_WALLET_IDS.map((walletId) => ({ walletId, gapLimit, derive: fixtureDeriver(walletId) }));
}

/** Rows as a store keeps them, updated only from changesets. */
export class MemoryRowStore {
  private readonly syncs = new Map<string, StoredWalletSync>();
  private readonly addresses = new Map<string, Map<string, StoredAddress>>();
  private readonly transactions = new Map<string, Map<string, StoredTransaction>>();

  persist(changeset: EngineChangeset): void {
    for (const change of changeset.wallets) {
      const id = change.walletId;
      const addresses = this.addresses.get(id) ?? new Map<string, StoredAddress>();
      const txs = this.transactions.get(id) ?? new Map<string, StoredTransaction>();
      for (const a of change.addressesAdded) {
        const key = `${a.branch}/${a.index}`;
        if (addresses.has(key)) throw new Error(`address ${id} ${key} inserted twice`);
        addresses.set(key, structuredClone(a));
      }
      for (const t of change.transactionsAdded) {
        if (txs.has(t.txid)) throw new Error(`transaction ${id} ${t.txid} inserted twice`);
        txs.set(t.txid, structuredClone(t));
      }
      for (const t of change.transactionsUpdated) {
        if (!txs.has(t.txid)) throw new Error(`update of unknown transaction ${id} ${t.txid}`);
        txs.set(t.txid, structuredClone(t));
      }
      for (const txid of change.transactionsRemoved) {
        if (!txs.delete(txid)) throw new Error(`removal of unknown transaction ${id} ${txid}`);
      }
      this.syncs.set(id, structuredClone(change.sync));
      this.addresses.set(id, addresses);
      this.transactions.set(id, txs);
    }
  }

  rows(walletId: string): StoredWalletRows {
    const sync = this.syncs.get(walletId);
    if (!sync) throw new Error(`nothing stored for ${walletId}`);
    return {
      sync: structuredClone(sync),
      addresses: [...(this.addresses.get(walletId)?.values() ?? [])].map((a) => structuredClone(a)),
      transactions: [...(this.transactions.get(walletId)?.values() ?? [])].map((t) => structuredClone(t)),
    };
  }
}

/** A fresh engine state with all seven fixture wallets, and a store holding what it persisted. */
export function freshEngine(gapLimit = 20): { state: EngineState; store: MemoryRowStore; configs: WalletConfig[] } {
  const state = createEngineState();
  const store = new MemoryRowStore();
  const configs = walletConfigs(gapLimit);
  for (const config of configs) store.persist(addWallet(state, config));
  return { state, store, configs };
}

/** The engine state rebuilt from stored rows only (what a restarted process does). */
export function restoredEngine(store: MemoryRowStore, configs: WalletConfig[]): EngineState {
  const state = createEngineState();
  for (const config of configs) {
    const changeset = addWallet(state, config, store.rows(config.walletId));
    if (changeset.wallets.length !== 0) throw new Error('restoring derived new scripts although the gap limit did not change');
  }
  return state;
}

export function applyAndPersist(state: EngineState, store: MemoryRowStore, update: ChainUpdate): EngineChangeset {
  const changeset = applyUpdate(state, update);
  store.persist(changeset);
  return changeset;
}
