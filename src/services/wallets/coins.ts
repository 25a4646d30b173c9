/**
 * A wallet's coins and receive addresses: freezing and labelling coins, handing out receive addresses,
 * and everything PSBT creation needs to spend (read from the store's truth at one revision).
 */
import { normalizeAddress } from '../../core/address.js';
import { toHex } from '../../core/bytes.js';
import { NETWORKS, type NetworkName } from '../../core/network.js';
import { entryAtTip, scriptOwner, type WalletUtxo } from '../../engine/index.js';
import type { Repositories, Store, UtxoFlagRow } from '../../store/repositories.js';
import { ServiceError, invalidField } from '../errors.js';
import type { Principal } from '../principal.js';
import { MAX_LABEL_CHARS, checkText } from '../wallet-input.js';
import { scriptAddress } from '../wallet-format.js';
import { transactionHex, walletLists, type WalletScriptsCache, type WalletStateCache, type WalletView } from '../wallet-state.js';
import type { SpendableUtxo, WalletForSpending } from './spending.js';
import { walletNotFound, type WalletAccess } from './access.js';

export interface WalletCoinsDeps {
  store: Store;
  network: NetworkName;
  access: WalletAccess;
  states: WalletStateCache;
  scripts: WalletScriptsCache;
}

export class WalletCoins {
  constructor(private readonly deps: WalletCoinsDeps) {}

  /**
   * Sats of the wallet's unconfirmed coins that Core counts as trusted (its own change, and outputs of
   * its own unconfirmed transactions): inside the API's `confirmed` balance, shown apart by the web page.
   */
  async trustedUnconfirmed(principal: Principal, alias: string): Promise<number> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    let total = 0n;
    for (const u of (await this.forSpending(wallet.id)).utxos) if (u.blockHeight === null && u.safe) total += u.valueSat;
    return Number(total);
  }

  /** Freezes/unfreezes or labels one of the wallet's coins (spend access). */
  async updateUtxo(principal: Principal, alias: string, outpoint: { txid: string; vout: number }, change: { frozen?: boolean; label?: string }): Promise<void> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    const view = await this.deps.states.view(wallet);
    const known = walletLists(view).unspent.some((u) => u.txid === outpoint.txid && u.vout === outpoint.vout);
    if (!known) throw new ServiceError('not_found', 'utxo_not_found', 'The wallet has no such unspent output');
    if (change.label !== undefined && change.label.length > MAX_LABEL_CHARS) throw invalidField('/label', `must be at most ${MAX_LABEL_CHARS} characters`);
    if (change.label !== undefined) checkText(change.label, '/label');
    const current = (await this.deps.store.wallets.utxoFlags(wallet.id)).find((f) => f.txid === outpoint.txid && f.vout === outpoint.vout);
    await this.deps.store.wallets.setUtxoFlag(wallet.id, {
      txid: outpoint.txid,
      vout: outpoint.vout,
      frozen: change.frozen ?? current?.frozen ?? false,
      label: change.label ?? current?.label ?? '',
    });
  }

  /**
   * Hands out a receive address no one got before (Bitcoin Core's getnewaddress): the index after the
   * last one revealed, used on chain or shown in the wallet details, whichever is higher, taken atomically
   * in the store so concurrent callers on any instance get distinct addresses, never the shown one. Never more than the gap limit past the last used
   * address: a wallet restored from the same keys would not see a payment there. "read" access suffices:
   * receiving risks no funds.
   */
  async revealNextAddress(principal: Principal, alias: string): Promise<{ address: string; index: number }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const revealed = await this.deps.store.wallets.revealNextReceive(wallet.id);
    if (revealed === 'not_found') throw walletNotFound(); // deleted meanwhile
    if (revealed === 'gap_limit_reached') {
      throw new ServiceError(
        'conflict',
        'gap_limit_reached',
        `Every receive address up to the gap limit (${wallet.gapLimit}) past the last used one was handed out already: use one of those unused addresses, or have the wallet's owner raise its gap_limit`,
      );
    }
    const script = this.deps.scripts.get(wallet).derive(0, revealed.index, 1)[0]!;
    return { address: scriptAddress(toHex(script), wallet.network), index: revealed.index };
  }

  /** The wallet's spendable coins, transactions and derived scripts at one stored revision. */
  async forSpending(walletId: string): Promise<WalletForSpending> {
    const wallet = await this.deps.store.wallets.findById(walletId);
    if (!wallet) throw walletNotFound();
    const view = await this.deps.states.view(wallet);
    const utxos = withFlags(spendableCoins(view), await this.deps.store.wallets.utxoFlags(wallet.id));
    const { summary } = view;
    return {
      wallet,
      revision: view.revision,
      utxos,
      tipHeight: summary.tip?.height ?? Math.max(wallet.birthday - 1, 0),
      nextChangeIndex: summary.lastUsedChange + 1,
      // A replacement looks up a few transactions: a pass over this revision's list, no copy of it.
      transaction: (txid) => {
        const entry = view.lists.transactions.find((t) => t.txid === txid);
        return entry && entryAtTip(entry, view.lists.tipHeight);
      },
      ownerOfScript: (script) => scriptOwner(view.state, wallet.id, script),
    };
  }

  /** Labels an address of the wallet (spend access); the transactions paying it show the label. */
  async setAddressLabel(principal: Principal, alias: string, address: string, label: string): Promise<void> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    if (label.length > MAX_LABEL_CHARS) throw invalidField('/label', `must be at most ${MAX_LABEL_CHARS} characters`);
    checkText(label, '/label');
    let write;
    try {
      write = this.addressLabelsWrite(wallet.id, [{ address, label }]);
    } catch {
      throw invalidField('/address', 'must be an address of the wallet\'s network', 'invalid_address');
    }
    await this.deps.store.transaction(write);
  }

  /** The write of PSBT recipients' labels (checked by the caller), to run inside the transaction that stores the PSBT. */
  addressLabelsWrite(walletId: string, labels: { address: string; label: string }[]): (repos: Repositories) => Promise<void> {
    const network = NETWORKS[this.deps.network];
    const rows = labels.map(({ address, label }) => ({ address: normalizeAddress(address, network), label }));
    return async (repos) => {
      if (rows.length > 0) await repos.wallets.setAddressLabels(walletId, rows);
    };
  }
}

/** A revision's coins with the frozen ones marked, for the frozen outpoints last seen with that list. */
const flaggedOf = new WeakMap<readonly SpendableUtxo[], { frozen: string; coins: readonly SpendableUtxo[] }>();

/**
 * The coins with the frozen ones marked. The coins are shared by every request on their revision; only frozen
 * coins are copied (few, against up to hundreds of thousands of coins), found in one pass that looks each coin up
 * among them. A flag that only labels a coin changes nothing here. Without a frozen coin the shared list itself is
 * handed on; with some, one frozen copy per revision and set of frozen coins, so that PSBT creation and coin
 * selection reuse their work on it as on the shared list.
 */
function withFlags(coins: readonly SpendableUtxo[], flags: readonly UtxoFlagRow[]): readonly SpendableUtxo[] {
  const frozenVouts = new Map<string, Set<number>>();
  const frozenOutpoints: string[] = [];
  for (const flag of flags) {
    if (!flag.frozen) continue;
    let vouts = frozenVouts.get(flag.txid);
    if (!vouts) frozenVouts.set(flag.txid, (vouts = new Set()));
    vouts.add(flag.vout);
    frozenOutpoints.push(`${flag.txid}:${flag.vout}`);
  }
  if (frozenVouts.size === 0) return coins;
  const frozen = frozenOutpoints.sort().join(' ');
  const known = flaggedOf.get(coins);
  if (known?.frozen === frozen) return known.coins;
  let copy: SpendableUtxo[] | undefined;
  for (let i = 0; i < coins.length; i++) {
    // A flag of a coin spent since matches nothing.
    if (!frozenVouts.get(coins[i]!.txid)?.has(coins[i]!.vout)) continue;
    copy ??= [...coins];
    copy[i] = Object.freeze({ ...coins[i]!, frozen: true });
  }
  const flagged = copy ? Object.freeze(copy) : coins;
  flaggedOf.set(coins, { frozen, coins: flagged });
  return flagged;
}

const spendableOf = new WeakMap<WalletView['lists'], readonly SpendableUtxo[]>();

/**
 * Each unspent entry's record as PSBT creation takes it. The engine's lists carry an entry unchanged from
 * one revision to the next until its transaction or a neighbour changes (then the entry is a new object),
 * and a record holds nothing that depends on the tip: a new block rebuilds only the records of the coins it
 * touched, not 100,000 of them with their previous transactions.
 */
const spendableOfEntry = new WeakMap<WalletUtxo, SpendableUtxo>();

/** A revision's coins as PSBT creation takes them (not frozen): built once per revision's lists, shared by every request on it. */
function spendableCoins(view: WalletView): readonly SpendableUtxo[] {
  const cached = spendableOf.get(view.lists);
  if (cached) return cached;
  const coins = Object.freeze(
    view.lists.unspent.map((u) => {
      let coin = spendableOfEntry.get(u);
      if (!coin) spendableOfEntry.set(u, (coin = spendableRecord(view, u)));
      return coin;
    }),
  );
  spendableOf.set(view.lists, coins);
  return coins;
}

function spendableRecord(view: WalletView, u: WalletUtxo): SpendableUtxo {
  const prevTxHex = transactionHex(view, u.txid);
  if (prevTxHex === undefined) throw new Error(`Wallet ${view.wallet.id}: no transaction for unspent output ${u.txid}`);
  // Fields spelled out: spreading engine records was the slowest part of building this list.
  const { txid, vout, valueSat, script, branch, index, blockHeight, safe, coinbase } = u;
  return Object.freeze({ txid, vout, valueSat, script, branch, index, blockHeight, safe, coinbase, prevTxHex, frozen: false });
}
