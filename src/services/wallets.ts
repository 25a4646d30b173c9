/**
 * Wallet use cases: create, list, read, update, delete, rescan; the wallet details and transaction
 * lists of the API; the WalletReader seam for PSBTs and the WalletDirectory of the service details.
 */
import { randomUUID } from 'node:crypto';
import { decodeAddress, normalizeAddress } from '../core/address.js';
import { toHex } from '../core/bytes.js';
import { CoreError } from '../core/errors.js';
import { HARDENED } from '../core/keys/derive.js';
import { parseTransaction } from '../core/tx.js';
import { NETWORKS, type NetworkName } from '../core/network.js';
import { getBalances, walletSummary, type WalletTxEntry } from '../engine/index.js';
import type { ChainSource, ChainTip } from '../chain/types.js';
import { StoreConflictError, type Repositories, type Store, type StoredWallet, type WalletShare } from '../store/repositories.js';
import { ServiceError, invalidField } from './errors.js';
import type { Principal } from './principal.js';
import type { WalletDirectory, WalletListing } from './service-details.js';
import {
  NO_RESERVATIONS,
  type PsbtReservations,
  type SpendableUtxo,
  type WalletAccessNeed,
  type WalletForSpending,
  type WalletReader,
  type WalletRecord,
} from './wallet-access.js';
import { balanceView, newestFirst, scriptAddress, txListEntry, utxoView, type TxListEntry, type UtxoView } from './wallet-format.js';
import {
  aliasFromName,
  checkAlias,
  checkBirthday,
  checkDescription,
  checkGapLimit,
  checkKeyLabels,
  checkName,
  checkShares,
  resolveKeys,
  MAX_LABEL_CHARS,
  type Birthday,
  type ShareInput,
  type WalletCreateInput,
  type WalletUpdateInput,
} from './wallet-input.js';
import { WalletScriptsCache, WalletStateCache, walletLists, type WalletView } from './wallet-state.js';
import { birthdayHeight } from './wallet-birthday.js';
import type { AddressEntry, Page, ScanState, WalletDetails, WalletListItem } from './wallet-format.js';

export type { AddressEntry, Page, ScanState, WalletDetails, WalletListItem } from './wallet-format.js';

/** Where the wallet part reaches the chain; null when no node is configured. */
export interface ChainAccess {
  readonly source: ChainSource | null;
  /** The node's tip, cached briefly; null when the node does not answer. */
  tip(): Promise<ChainTip | null>;
}

export const WALLET_NOT_FOUND_MESSAGE = 'Wallet not found';
const notFound = () => new ServiceError('not_found', 'wallet_not_found', WALLET_NOT_FOUND_MESSAGE);

export function chainUnavailable(detail?: string): ServiceError {
  return new ServiceError('unavailable', 'chain_unavailable', detail ? `The chain backend is unavailable: ${detail}` : 'No chain backend is configured');
}

function toRecord(wallet: StoredWallet): WalletRecord {
  const { birthday: _birthday, createdAt: _createdAt, revision: _revision, tip: _tip, ...record } = wallet;
  return { ...record, keys: wallet.keys.map((k) => ({ ...k })) };
}

const ACCESS_RANK = { read: 1, spend: 2, owner: 3 } as const;

export interface WalletServiceDeps {
  store: Store;
  network: NetworkName;
  chain: ChainAccess;
  now: () => number;
  scripts?: WalletScriptsCache;
}

export class WalletService implements WalletReader, WalletDirectory {
  readonly scripts: WalletScriptsCache;
  private readonly states: WalletStateCache;
  private reservations: PsbtReservations = NO_RESERVATIONS;

  constructor(private readonly deps: WalletServiceDeps) {
    this.scripts = deps.scripts ?? new WalletScriptsCache();
    this.states = new WalletStateCache(deps.store, this.scripts);
  }

  /** Hook for the PSBT part: coins held by pending PSBTs and their count. */
  setPsbtReservations(reservations: PsbtReservations): void {
    this.reservations = reservations;
  }

  // -- access -----------------------------------------------------------------------------------

  private async accessOf(principal: Principal, wallet: StoredWallet): Promise<'owner' | 'read' | 'spend' | null> {
    if (wallet.ownerName === principal.userName) return 'owner';
    const share = (await this.deps.store.wallets.shares(wallet.id)).find((s) => s.userName === principal.userName);
    return share?.access ?? null;
  }

  private async resolveStored(principal: Principal, alias: string, need: WalletAccessNeed): Promise<StoredWallet> {
    if (typeof alias !== 'string' || alias.length > 64) throw notFound();
    const wallet = await this.deps.store.wallets.findByAlias(alias);
    if (!wallet) throw notFound();
    const access = await this.accessOf(principal, wallet);
    if (access === null || ACCESS_RANK[access] < ACCESS_RANK[need]) throw notFound();
    return wallet;
  }

  async resolve(principal: Principal, alias: string, need: WalletAccessNeed): Promise<WalletRecord> {
    return toRecord(await this.resolveStored(principal, alias, need));
  }

  // -- create -----------------------------------------------------------------------------------

  async create(principal: Principal, input: WalletCreateInput): Promise<WalletDetails> {
    const name = checkName(input.name);
    const givenAlias = checkAlias(input.alias);
    const description = checkDescription(input.description);
    const gapLimit = checkGapLimit(input.gap_limit);
    const birthday = checkBirthday(input.birthday);
    const shares = checkShares(input.shared_with) ?? [];
    const { descriptors, policyLabels } = resolveKeys(input, this.deps.network);
    const keyLabels = checkKeyLabels(input.key_labels, '/key_labels');
    for (const [i, label] of policyLabels.entries()) {
      if (label !== undefined && label.length > MAX_LABEL_CHARS) throw invalidField(`/policy/keys/${i}/label`, `must be at most ${MAX_LABEL_CHARS} characters`);
    }
    await this.checkShareUsers(principal, shares);
    const birthdayHeight = await this.birthdayHeight(birthday);

    const keys = descriptors.info.keys.map((k, i) => ({
      fingerprint: k.fingerprint,
      derivation: k.derivation,
      xpub: k.xpub,
      label: policyLabels[i] ?? keyLabels.find((l) => l.fingerprint === k.fingerprint)?.label ?? '',
    }));
    const base: Omit<StoredWallet, 'alias'> = {
      id: randomUUID(),
      name,
      description,
      ownerName: principal.userName,
      network: this.deps.network,
      receiveDescriptor: descriptors.receive,
      changeDescriptor: descriptors.change,
      addressType: descriptors.info.addressType,
      sigsRequired: descriptors.info.sigsRequired,
      sigsTotal: descriptors.info.sigsTotal,
      keys,
      gapLimit,
      birthday: birthdayHeight,
      createdAt: this.deps.now(),
      revision: 0,
      tip: null,
    };
    const shareRows: WalletShare[] = shares.map((s) => ({ userName: s.userName, access: s.access }));
    const stored = await this.insertWithAlias(base, givenAlias, name, shareRows);
    return this.detailsOf(stored);
  }

  private async insertWithAlias(base: Omit<StoredWallet, 'alias'>, givenAlias: string | undefined, name: string, shares: WalletShare[]): Promise<StoredWallet> {
    const derived = aliasFromName(name);
    for (let attempt = 1; attempt <= 100; attempt++) {
      const suffix = attempt === 1 ? '' : `-${attempt}`;
      const alias = givenAlias ?? `${derived.slice(0, 64 - suffix.length)}${suffix}`;
      const wallet: StoredWallet = { ...base, alias };
      try {
        await this.deps.store.transaction((repos) => repos.wallets.insert(wallet, shares));
        return wallet;
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
        if (givenAlias !== undefined) throw new ServiceError('conflict', 'wallet_exists', `A wallet with alias ${alias} already exists`);
      }
    }
    throw new ServiceError('conflict', 'wallet_exists', `Too many wallets are named like ${name}; give an alias`);
  }

  private async checkShareUsers(principal: Principal, shares: readonly ShareInput[]): Promise<void> {
    for (const [i, share] of shares.entries()) {
      if (share.userName === principal.userName) throw invalidField(`/shared_with/${i}/user`, 'is the owner');
      if (!(await this.deps.store.users.find(share.userName))) throw invalidField(`/shared_with/${i}/user`, 'is not a known user');
    }
  }

  private requireChain(): ChainSource {
    const source = this.deps.chain.source;
    if (!source) throw chainUnavailable();
    return source;
  }

  /** Height to start scanning from. */
  private async birthdayHeight(birthday: Birthday): Promise<number> {
    if (birthday.kind === 'height') return birthday.height;
    try {
      return await birthdayHeight(this.requireChain(), birthday);
    } catch (error) {
      if (error instanceof CoreError) throw chainUnavailable(error.message);
      throw error;
    }
  }

  // -- read -------------------------------------------------------------------------------------

  async list(principal: Principal): Promise<WalletListItem[]> {
    const wallets = await this.deps.store.wallets.listAccessible(principal.userName);
    const items: WalletListItem[] = [];
    for (const { wallet } of wallets) {
      const view = await this.states.view(wallet);
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
    const wallets = await this.deps.store.wallets.listAccessible(principal.userName);
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
    return this.detailsOf(await this.resolveStored(principal, alias, 'read'), page);
  }

  private async detailsOf(wallet: StoredWallet, page: Page = {}): Promise<WalletDetails> {
    const view = await this.states.view(wallet);
    const { state } = view;
    const summary = walletSummary(state, wallet.id);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    const utxo = await this.utxoViews(view, labels);
    const scripts = this.scripts.get(wallet);
    const receiveIndex = summary.lastUsedReceive + 1;
    const changeIndex = summary.lastUsedChange + 1;
    const address = (branch: 0 | 1, index: number) => scriptAddress(toHexScript(scripts.derive(branch, index, 1)[0]!), wallet.network);
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
      pending_psbts: await this.reservations.pendingCount(wallet.id),
    };
  }

  private async utxoViews(view: WalletView, labels: Map<string, string>): Promise<UtxoView[]> {
    const flags = await this.deps.store.wallets.utxoFlags(view.wallet.id);
    const ctx = {
      network: view.wallet.network,
      addressLabels: labels,
      coinLabels: new Map(flags.filter((f) => f.label !== '').map((f) => [`${f.txid}:${f.vout}`, f.label])),
      reservedBy: await this.reservations.reservedOutpoints(view.wallet.id),
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
    const wallets = await this.deps.store.wallets.listAccessible(principal.userName);
    const entries: TxListEntry[] = [];
    for (const { wallet } of wallets) {
      const view = await this.states.view(wallet);
      entries.push(...this.txEntries(view, await this.deps.store.wallets.addressLabels(wallet.id)));
    }
    return paginate(entries.sort(newestFirst), page);
  }

  async utxos(principal: Principal, alias: string): Promise<Array<UtxoView & { frozen: boolean }>> {
    const wallet = await this.resolveStored(principal, alias, 'read');
    const view = await this.states.view(wallet);
    const frozen = new Set((await this.deps.store.wallets.utxoFlags(wallet.id)).filter((f) => f.frozen).map((f) => `${f.txid}:${f.vout}`));
    return (await this.utxoViews(view, await this.deps.store.wallets.addressLabels(wallet.id))).map((u) => ({ ...u, frozen: frozen.has(`${u.txid}:${u.vout}`) }));
  }

  /** Freezes/unfreezes or labels one of the wallet's coins (spend access). */
  async updateUtxo(principal: Principal, alias: string, outpoint: { txid: string; vout: number }, change: { frozen?: boolean; label?: string }): Promise<void> {
    const wallet = await this.resolveStored(principal, alias, 'spend');
    const view = await this.states.view(wallet);
    const known = walletLists(view).unspent.some((u) => u.txid === outpoint.txid && u.vout === outpoint.vout);
    if (!known) throw new ServiceError('not_found', 'utxo_not_found', 'The wallet has no such unspent output');
    if (change.label !== undefined && change.label.length > MAX_LABEL_CHARS) throw invalidField('/label', `must be at most ${MAX_LABEL_CHARS} characters`);
    const current = (await this.deps.store.wallets.utxoFlags(wallet.id)).find((f) => f.txid === outpoint.txid && f.vout === outpoint.vout);
    await this.deps.store.wallets.setUtxoFlag(wallet.id, {
      txid: outpoint.txid,
      vout: outpoint.vout,
      frozen: change.frozen ?? current?.frozen ?? false,
      label: change.label ?? current?.label ?? '',
    });
  }

  async addresses(principal: Principal, alias: string, branch: 0 | 1, from: number, count: number): Promise<AddressEntry[]> {
    // Addresses exist only at non-hardened indexes (BIP32); the query schema bounds from and count alone.
    if (from + count > HARDENED) throw invalidField('/from', `plus count must not pass ${HARDENED}: the last address index is ${HARDENED - 1}`);
    const wallet = await this.resolveStored(principal, alias, 'read');
    const view = await this.states.view(wallet);
    const used = receivingScripts(walletLists(view).transactions);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    const scripts = this.scripts.get(wallet).derive(branch, from, count);
    return scripts.map((script, i) => {
      const hex = toHexScript(script);
      const address = scriptAddress(hex, wallet.network);
      return { index: from + i, address, label: labels.get(address) ?? '', used: used.has(hex) };
    });
  }

  /**
   * Hands out a receive address no one got before (Bitcoin Core's getnewaddress): the index after the
   * last one revealed or used on chain, whichever is higher, taken atomically in the store so concurrent
   * callers on any instance get distinct addresses. The sync watches it from its next read of the tip on,
   * however far past the gap limit it is. "read" access suffices: receiving risks no funds.
   */
  async revealNextAddress(principal: Principal, alias: string): Promise<{ address: string; index: number }> {
    const wallet = await this.resolveStored(principal, alias, 'read');
    const index = await this.deps.store.wallets.revealNextReceive(wallet.id);
    if (index === undefined) throw notFound(); // deleted meanwhile
    const script = this.scripts.get(wallet).derive(0, index, 1)[0]!;
    return { address: scriptAddress(toHexScript(script), wallet.network), index };
  }

  // -- update, delete, rescan --------------------------------------------------------------------

  async update(principal: Principal, alias: string, input: WalletUpdateInput): Promise<WalletDetails> {
    const wallet = await this.resolveStored(principal, alias, 'owner');
    const name = input.name === undefined ? wallet.name : checkName(input.name);
    const description = input.description === undefined ? wallet.description : checkDescription(input.description);
    const labels = checkKeyLabels(input.labels, '/labels');
    const keys = wallet.keys.map((k) => ({ ...k, label: labels.find((l) => l.fingerprint === k.fingerprint)?.label ?? k.label }));
    const shares = checkShares(input.shared_with);
    if (shares) await this.checkShareUsers(principal, shares);
    await this.deps.store.transaction(async (repos) => {
      await repos.wallets.updateDetails(wallet.id, { name, description, keys });
      if (shares) await repos.wallets.replaceShares(wallet.id, shares);
    });
    return this.detailsOf({ ...wallet, name, description, keys });
  }

  async shares(principal: Principal, alias: string): Promise<WalletShare[]> {
    const wallet = await this.resolveStored(principal, alias, 'owner');
    return this.deps.store.wallets.shares(wallet.id);
  }

  /** Removes the wallet with every row about it, its PSBTs and their coin reservations, in one transaction. */
  async delete(principal: Principal, alias: string): Promise<void> {
    const wallet = await this.resolveStored(principal, alias, 'owner');
    await this.deps.store.transaction(async (repos) => {
      for (const psbt of await repos.psbts.list(wallet.id)) await repos.psbts.delete(wallet.id, psbt.txid);
      await repos.wallets.delete(wallet.id);
    });
    this.states.forget(wallet.id);
    this.scripts.forget(wallet.id);
  }

  /** Drops the wallet's chain rows; the sync scans again from `fromHeight` (default: its birthday). */
  async rescan(principal: Principal, alias: string, fromHeight?: number): Promise<{ alias: string; from: number }> {
    const wallet = await this.resolveStored(principal, alias, 'owner');
    if (fromHeight !== undefined && (!Number.isSafeInteger(fromHeight) || fromHeight < 0)) throw invalidField('/from', 'must be a block height (integer >= 0)');
    const from = fromHeight ?? wallet.birthday;
    // A start after the chain's next block (a mistyped height) would show no coin until the chain got there.
    // Up to the wallet's own next block the chain has it; past that, the node's tip decides.
    if (fromHeight !== undefined && fromHeight > (wallet.tip?.height ?? -1) + 1) {
      const next = (await this.birthdayHeight({ kind: 'tip' })) + 1; // the node's tip, or 503 without one
      if (fromHeight > next) {
        throw new ServiceError('unprocessable', 'rescan_past_tip', `from must be at most ${next}, the next block of the chain: a later start would show no coin until the chain got there`, {
          errors: [{ path: '/from', message: `must be at most ${next}` }],
        });
      }
    }
    await this.deps.store.transaction((repos) => repos.wallets.resetChain(wallet.id, from));
    this.states.forget(wallet.id);
    return { alias: wallet.alias, from };
  }

  /** Scan progress of a wallet the caller can read (for the CLI progress bar). */
  async scan(principal: Principal, alias: string): Promise<ScanState | null> {
    const wallet = await this.resolveStored(principal, alias, 'read');
    return this.scanState(wallet, wallet.tip);
  }

  // -- WalletReader (PSBT part) ------------------------------------------------------------------

  async loadForSpending(walletId: string): Promise<WalletForSpending> {
    const wallet = await this.deps.store.wallets.findById(walletId);
    if (!wallet) throw notFound();
    const view = await this.states.view(wallet);
    const { transactions, unspent, hexByTxid } = walletLists(view);
    const flags = new Map((await this.deps.store.wallets.utxoFlags(wallet.id)).map((f) => [`${f.txid}:${f.vout}`, f]));
    // Few addresses carry labels; turning them into scripts beats encoding an address per coin.
    const network = NETWORKS[wallet.network];
    const labelByScript = new Map(
      [...(await this.deps.store.wallets.addressLabels(wallet.id))].map(([address, label]) => [toHex(decodeAddress(address, network)), label]),
    );
    const utxos: SpendableUtxo[] = unspent.map((u) => {
      const flag = flags.get(`${u.txid}:${u.vout}`);
      const prevTxHex = hexByTxid.get(u.txid);
      if (prevTxHex === undefined) throw new Error(`Wallet ${wallet.id}: no transaction for unspent output ${u.txid}`);
      // Fields spelled out: spreading 10,000 engine records per request was the slowest part.
      const { txid, vout, valueSat, script, branch, index, confirmations, blockHeight, safe, coinbase } = u;
      const label = flag?.label || labelByScript.get(script) || '';
      return { txid, vout, valueSat, script, branch, index, confirmations, blockHeight, safe, coinbase, prevTxHex, frozen: flag?.frozen ?? false, label };
    });
    const summary = walletSummary(view.state, wallet.id);
    return {
      wallet: toRecord(wallet),
      utxos,
      tipHeight: summary.tip?.height ?? Math.max(wallet.birthday - 1, 0),
      nextChangeIndex: summary.lastUsedChange + 1,
      transactions: transactions as WalletTxEntry[],
    };
  }

  prepareAddressLabels(walletId: string, labels: { address: string; label: string }[]): (repos: Repositories) => Promise<void> {
    const network = NETWORKS[this.deps.network];
    const rows = labels.map(({ address, label }) => ({ address: normalizeAddress(address, network), label }));
    return async (repos) => {
      if (rows.length > 0) await repos.wallets.setAddressLabels(walletId, rows);
    };
  }
}

function paginate<T>(items: T[], page: Page): T[] {
  const offset = page.offset ?? 0;
  return page.limit === undefined ? items.slice(offset) : items.slice(offset, offset + page.limit);
}

const toHexScript = (script: Uint8Array): string => toHex(script);

/** Output scripts of every live (confirmed or mempool) transaction of the wallet. */
function receivingScripts(transactions: readonly WalletTxEntry[]): Set<string> {
  const scripts = new Set<string>();
  for (const t of transactions) {
    if (t.status === 'dropped') continue;
    for (const output of parseTransaction(t.hex).outputs) scripts.add(toHex(output.script));
  }
  return scripts;
}
