/**
 * What a wallet's users read (read access): the wallet list, one wallet's details, transactions, coins,
 * addresses and scan progress. Nothing here writes. Coins held by pending PSBTs come from the store's
 * reservations, which the sync keeps in step with the chain.
 */
import { toHex } from '../../core/bytes.js';
import { HARDENED } from '../../core/keys/derive.js';
import { parseTransaction } from '../../core/tx.js';
import { getBalances, walletSummary, type WalletTxEntry } from '../../engine/index.js';
import type { ChainSource, ChainTip } from '../../chain/types.js';
import type { Store, StoredWallet } from '../../store/repositories.js';
import { invalidField } from '../errors.js';
import type { Principal } from '../principal.js';
import type { WalletDirectory, WalletListing } from '../service-details.js';
import {
  balanceView,
  newestFirst,
  scriptAddress,
  txListEntry,
  utxoView,
  type AddressEntry,
  type Page,
  type ScanState,
  type TxListEntry,
  type UtxoView,
  type WalletDetails,
  type WalletListItem,
} from '../wallet-format.js';
import { walletLists, type WalletScriptsCache, type WalletStateCache, type WalletView } from '../wallet-state.js';
import type { WalletAccess } from './access.js';

/** Where the wallet part reaches the chain; null when no node is configured. */
export interface ChainAccess {
  readonly source: ChainSource | null;
  /** The node's tip, cached briefly; null when the node does not answer. */
  tip(): Promise<ChainTip | null>;
}

export interface WalletReadsDeps {
  store: Store;
  access: WalletAccess;
  chain: ChainAccess;
  states: WalletStateCache;
  scripts: WalletScriptsCache;
}

export class WalletReads implements WalletDirectory {
  constructor(private readonly deps: WalletReadsDeps) {}

  async list(principal: Principal): Promise<WalletListItem[]> {
    const wallets = (await this.deps.access.readable(principal)).map((wallet) => ({ wallet }));
    const items: WalletListItem[] = [];
    for (const { wallet } of wallets) {
      const view = await this.deps.states.view(wallet);
      items.push({
        alias: wallet.alias,
        name: wallet.name,
        description: wallet.description,
        address_type: wallet.addressType,
        sigs_required: wallet.sigsRequired,
        sigs_total: wallet.sigsTotal,
        balance: balanceView(getBalances(view.state, wallet.id)),
      });
    }
    return items;
  }

  async listFor(principal: Principal): Promise<WalletListing> {
    const wallets = (await this.deps.access.reachable(principal)).map((wallet) => ({ wallet }));
    const listing: WalletListing = { wallets_names: [], alias_name: {}, name_alias: {}, wallets_alias: [] };
    for (const { wallet } of wallets) {
      listing.wallets_names.push(wallet.name);
      listing.wallets_alias.push(wallet.alias);
      listing.alias_name[wallet.alias] = wallet.name;
      listing.name_alias[wallet.name] = wallet.alias;
    }
    return listing;
  }

  async details(principal: Principal, alias: string, page: Page = {}): Promise<WalletDetails> {
    return this.detailsOf(await this.deps.access.resolve(principal, alias, 'read'), page);
  }

  /** The details of a wallet the caller was already checked for. */
  async detailsOf(wallet: StoredWallet, page: Page = {}): Promise<WalletDetails> {
    const view = await this.deps.states.view(wallet);
    const { state } = view;
    const summary = walletSummary(state, wallet.id);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    const utxo = await this.utxoViews(view, labels);
    const scripts = this.deps.scripts.get(wallet);
    const receiveIndex = summary.lastUsedReceive + 1;
    const changeIndex = summary.lastUsedChange + 1;
    const address = (branch: 0 | 1, index: number) => scriptAddress(toHex(scripts.derive(branch, index, 1)[0]!), wallet.network);
    return {
      alias: wallet.alias,
      name: wallet.name,
      description: wallet.description,
      network: wallet.network,
      address_type: wallet.addressType,
      sigs_required: wallet.sigsRequired,
      sigs_total: wallet.sigsTotal,
      keys: wallet.keys.map((k) => ({ fingerprint: k.fingerprint, derivation: k.derivation, xpub: k.xpub, label: k.label })),
      recv_descriptor: wallet.receiveDescriptor,
      change_descriptor: wallet.changeDescriptor,
      address: address(0, receiveIndex),
      address_index: receiveIndex,
      change_address: address(1, changeIndex),
      change_index: changeIndex,
      balance: balanceView(getBalances(state, wallet.id)),
      utxo,
      txlist: paginate(this.txEntries(view, labels), page),
      scan: await this.scanState(wallet, summary.tip),
      pending_psbts: await this.deps.store.psbts.countPending(wallet.id),
    };
  }

  private async utxoViews(view: WalletView, labels: Map<string, string>): Promise<UtxoView[]> {
    const walletId = view.wallet.id;
    const flags = await this.deps.store.wallets.utxoFlags(walletId);
    const reservations = await this.deps.store.psbts.reservations(walletId);
    const ctx = {
      network: view.wallet.network,
      addressLabels: labels,
      coinLabels: new Map(flags.filter((f) => f.label !== '').map((f) => [`${f.txid}:${f.vout}`, f.label])),
      reservedBy: new Map(reservations.map((r) => [`${r.txid}:${r.vout}`, r.psbtTxid])),
    };
    return walletLists(view)
      .unspent.map((u) => utxoView(u, ctx))
      .sort((a, b) => b.confirmations - a.confirmations || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout));
  }

  /** Live transactions (confirmed and in the mempool), newest first; replaced or evicted ones are left out. */
  private txEntries(view: WalletView, labels: Map<string, string>): TxListEntry[] {
    return walletLists(view)
      .transactions.filter((e) => e.status !== 'dropped')
      .map((e) => txListEntry(e, view.wallet.alias, view.wallet.network, labels))
      .sort(newestFirst);
  }

  private async scanState(wallet: StoredWallet, tip: ChainTip | null): Promise<ScanState | null> {
    const nodeTip = await this.deps.chain.tip();
    if (nodeTip === null) return tip === null ? { progress: 0, height: Math.max(wallet.birthday - 1, 0) } : null;
    const reached = tip?.height ?? wallet.birthday - 1;
    if (reached >= nodeTip.height) return null;
    const total = nodeTip.height - wallet.birthday + 1;
    const done = Math.max(reached - wallet.birthday + 1, 0);
    return { progress: total <= 0 ? 1 : Math.min(done / total, 1), height: Math.max(reached, 0) };
  }

  async fullTxList(principal: Principal, page: Page = {}): Promise<TxListEntry[]> {
    const wallets = (await this.deps.access.readable(principal)).map((wallet) => ({ wallet }));
    const entries: TxListEntry[] = [];
    for (const { wallet } of wallets) {
      const view = await this.deps.states.view(wallet);
      entries.push(...this.txEntries(view, await this.deps.store.wallets.addressLabels(wallet.id)));
    }
    return paginate(entries.sort(newestFirst), page);
  }

  async utxos(principal: Principal, alias: string): Promise<Array<UtxoView & { frozen: boolean }>> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const view = await this.deps.states.view(wallet);
    const frozen = new Set((await this.deps.store.wallets.utxoFlags(wallet.id)).filter((f) => f.frozen).map((f) => `${f.txid}:${f.vout}`));
    return (await this.utxoViews(view, await this.deps.store.wallets.addressLabels(wallet.id))).map((u) => ({ ...u, frozen: frozen.has(`${u.txid}:${u.vout}`) }));
  }

  async addresses(principal: Principal, alias: string, branch: 0 | 1, from: number, count: number): Promise<AddressEntry[]> {
    // Addresses exist only at non-hardened indexes (BIP32); the query schema bounds from and count alone.
    if (from + count > HARDENED) throw invalidField('/from', `plus count must not pass ${HARDENED}: the last address index is ${HARDENED - 1}`);
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const view = await this.deps.states.view(wallet);
    const used = receivingScripts(walletLists(view).transactions);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    const scripts = this.deps.scripts.get(wallet).derive(branch, from, count);
    return scripts.map((script, i) => {
      const hex = toHex(script);
      const address = scriptAddress(hex, wallet.network);
      return { index: from + i, address, label: labels.get(address) ?? '', used: used.has(hex) };
    });
  }

  /** Scan progress of a wallet the caller can read (for the CLI progress bar). */
  async scan(principal: Principal, alias: string): Promise<ScanState | null> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    return this.scanState(wallet, wallet.tip);
  }
}

function paginate<T>(items: T[], page: Page): T[] {
  const offset = page.offset ?? 0;
  return page.limit === undefined ? items.slice(offset) : items.slice(offset, offset + page.limit);
}

/** Output scripts of every live (confirmed or mempool) transaction of the wallet. */
function receivingScripts(transactions: readonly WalletTxEntry[]): Set<string> {
  const scripts = new Set<string>();
  for (const t of transactions) {
    if (t.status === 'dropped') continue;
    for (const output of parseTransaction(t.hex).outputs) scripts.add(toHex(output.script));
  }
  return scripts;
}
