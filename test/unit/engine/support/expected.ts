/** Compares engine views with what Bitcoin Core's own wallet reported at a timeline snapshot. */
import { expect } from 'vitest';
import { encodeAddress } from '../../../../src/core/address.js';
import { fromHex } from '../../../../src/core/bytes.js';
import { NETWORKS } from '../../../../src/core/network.js';
import { addWallet, createEngineState, entryAtTip, getBalances, listTransactions, listUnspent, utxoAtTip, type EngineState, type WalletConfig, type WalletListsAtTip } from '../../../../src/engine/index.js';
import type { MemoryRowStore } from './replay.js';

/** Exact satoshis from Core's BTC JSON number (8 decimals at most). */
export const sats = (btc: number): bigint => BigInt(btc.toFixed(8).replace('.', ''));

const address = (scriptHex: string) => encodeAddress(fromHex(scriptHex), NETWORKS.regtest);

export function expectBalancesAndUtxos(state: EngineState, walletId: string, expected: any): void {
  const balances = getBalances(state, walletId);
  expect({ wallet: walletId, ...balances }).toEqual({
    wallet: walletId,
    confirmed: sats(expected.balances.trusted),
    unconfirmed: sats(expected.balances.untrusted_pending),
    immature: sats(expected.balances.immature),
  });

  const ours = listUnspent(state, walletId).map((u) => ({
    outpoint: `${u.txid}:${u.vout}`,
    amount: u.valueSat,
    confirmations: u.confirmations,
    address: address(u.script),
    path: `${u.branch}/${u.index}`,
    safe: u.safe,
  }));
  const core = expected.unspent.map((u: any) => ({
    outpoint: `${u.txid}:${u.vout}`,
    amount: sats(u.amount),
    confirmations: u.confirmations,
    address: u.address,
    path: /\/(\d+\/\d+)\]/.exec(u.desc)![1],
    safe: u.safe,
  }));
  const byOutpoint = (a: { outpoint: string }, b: { outpoint: string }) => (a.outpoint < b.outpoint ? -1 : 1);
  expect(ours.sort(byOutpoint)).toEqual(core.sort(byOutpoint));
}

/** Confirmed and mempool transactions: same txids, net effect, fee, category, confirmations, height. */
export function expectTransactions(state: EngineState, walletId: string, expected: any, mempoolTxids: Set<string>): void {
  const coreByTxid = new Map<string, any[]>();
  for (const entry of expected.transactions) {
    const live = entry.confirmations > 0 || (entry.confirmations === 0 && mempoolTxids.has(entry.txid));
    if (!live) continue;
    coreByTxid.set(entry.txid, [...(coreByTxid.get(entry.txid) ?? []), entry]);
  }
  const ours = listTransactions(state, walletId).filter((e) => e.status !== 'dropped');
  expect(ours.map((e) => e.txid).sort()).toEqual([...coreByTxid.keys()].sort());

  for (const entry of ours) {
    const core = coreByTxid.get(entry.txid)!;
    const fees = core.filter((c) => c.fee !== undefined).map((c) => sats(c.fee));
    const fee = fees[0];
    const net = core.reduce((sum, c) => sum + sats(c.amount), 0n) + (fee ?? 0n);
    const categories = new Set(core.map((c) => c.category));
    const summary = {
      txid: entry.txid,
      net: entry.netSat,
      fee: entry.feeSat,
      confirmations: entry.confirmations,
      blockheight: entry.blockHeight,
      blockhash: entry.blockHash,
    };
    expect(summary).toEqual({
      txid: entry.txid,
      net,
      fee: fee === undefined ? null : -fee,
      confirmations: core[0].confirmations,
      blockheight: core[0].blockheight,
      blockhash: core[0].blockhash,
    });
    if (entry.category === 'receive') expect([...categories]).toEqual(['receive']);
    if (entry.category === 'send') expect(categories.has('send')).toBe(true);
    if (entry.category === 'selftransfer') {
      expect([...categories].sort()).toEqual(['receive', 'send']);
      const moved = (cat: string) => core.filter((c) => c.category === cat).reduce((s, c) => s + sats(c.amount), 0n);
      expect(moved('send')).toBe(-moved('receive'));
    }
    const coreAddresses = core.map((c) => c.address);
    expect(coreAddresses).toContain(address(entry.addressScript!));
  }
}

const rank = (h: number | null) => h ?? Number.MAX_SAFE_INTEGER;

/** The lists as a reader loading every row builds them. */
export function expectSameAsFullLoad(lists: WalletListsAtTip, store: MemoryRowStore, config: WalletConfig): void {
  const full = createEngineState();
  addWallet(full, config, store.rows(config.walletId));
  const id = config.walletId;
  const transactions = listTransactions(full, id);
  const unspent = listUnspent(full, id);
  expect(lists.transactions.map((e) => entryAtTip(e, lists.tipHeight))).toEqual(transactions);
  expect(lists.unspent.map((u) => utxoAtTip(u, lists.tipHeight))).toEqual(unspent);
  expect(lists.balances).toEqual(getBalances(full, id));
  const live = transactions.filter((e) => e.status !== 'dropped').sort((a, b) => rank(b.blockHeight) - rank(a.blockHeight) || b.time - a.time || (a.txid < b.txid ? -1 : 1));
  expect(lists.liveNewestFirst.map((e) => entryAtTip(e, lists.tipHeight))).toEqual(live);
  const byConfirmations = [...unspent].sort((a, b) => b.confirmations - a.confirmations || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout));
  expect(lists.unspentByConfirmations.map((u) => utxoAtTip(u, lists.tipHeight))).toEqual(byConfirmations);
}
