/**
 * A wallet's labels as BIP329 JSON Lines: export every label (transactions, addresses, outputs, keys by
 * xpub) and import a file in one store transaction. Merge: the newer label wins (the line's `modified`, or
 * the import's time without one); references the wallet does not know are skipped and counted; an output
 * with `spendable: false` is frozen. One faulty line refuses the whole file, naming every faulty line.
 */
import { decodeAddress, normalizeAddress } from '../../core/address.js';
import { readBip329, writeBip329, type Bip329Output, type Bip329Record } from '../../core/bip329.js';
import { toHex } from '../../core/bytes.js';
import { encodeExtendedPublicKey, parseExtendedPublicKey } from '../../core/keys/extended-key.js';
import { NETWORKS } from '../../core/network.js';
import { parseTransaction } from '../../core/tx.js';
import { scriptOwner } from '../../engine/index.js';
import type { Repositories, Store, StoredLabel, StoredWallet, WalletKeyRow } from '../../store/repositories.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import { MAX_LABEL_CHARS } from '../wallet-input.js';
import { walletLists, type WalletStateCache, type WalletView } from '../wallet-state.js';
import { walletNotFound, type WalletAccess } from './access.js';

/** Most lines one label file may have. */
export const MAX_LABEL_LINES = 100_000;

export interface LabelImportResult {
  /** Records applied (a label or a frozen flag changed or confirmed). */
  imported: number;
  skipped: {
    /** References the wallet does not know (another wallet's transaction, an address not derived). */
    unknown_reference: number;
    /** Types the service keeps no labels for (input, pubkey, spscan, types of later versions). */
    unsupported_type: number;
    /** Lines older than the label the wallet has. */
    older: number;
  };
}

export interface WalletLabelsDeps {
  store: Store;
  access: WalletAccess;
  states: WalletStateCache;
  now: () => number;
}

const normalXpub = (xpub: string, wallet: StoredWallet): string => {
  const network = NETWORKS[wallet.network];
  return encodeExtendedPublicKey(parseExtendedPublicKey(xpub, network), network);
};

/** What the wallet knows, to tell its references from unknown ones. */
class WalletReferences {
  private readonly outputsOf = new Map<string, Set<number>>();

  constructor(
    private readonly view: WalletView,
    private readonly wallet: StoredWallet,
  ) {}

  hasTx(txid: string): boolean {
    return walletLists(this.view).hexByTxid.has(txid);
  }

  hasAddress(address: string): boolean {
    return scriptOwner(this.view.state, this.wallet.id, toHex(decodeAddress(address, NETWORKS[this.wallet.network]))) !== undefined;
  }

  /** Outputs paying the wallet, spent or not. */
  hasOutput(txid: string, vout: number): boolean {
    let owned = this.outputsOf.get(txid);
    if (!owned) {
      const hex = walletLists(this.view).hexByTxid.get(txid);
      const outputs = hex === undefined ? [] : parseTransaction(hex).outputs;
      owned = new Set(outputs.flatMap((o, i) => (scriptOwner(this.view.state, this.wallet.id, toHex(o.script)) ? [i] : [])));
      this.outputsOf.set(txid, owned);
    }
    return owned.has(vout);
  }
}

export class WalletLabels {
  constructor(private readonly deps: WalletLabelsDeps) {}

  /** Every label of the wallet as BIP329 JSON Lines (read access). */
  async export(principal: Principal, alias: string): Promise<{ text: string; fileName: string }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const stored = await this.deps.store.labels.list(wallet.id);
    const records: Bip329Output[] = [
      ...stored.map((l): Bip329Output => ({
        type: l.type,
        ref: l.ref,
        label: l.label,
        ...(l.type === 'output' && l.frozen ? { spendable: false } : {}),
        modified: l.updatedAt,
      })),
      ...wallet.keys.filter((k) => k.label !== '').map((k): Bip329Output => ({ type: 'xpub', ref: k.xpub, label: k.label, modified: k.labelUpdatedAt ?? 0 })),
    ];
    return { text: writeBip329(records), fileName: `${wallet.alias}-labels.jsonl` };
  }

  /** Imports a BIP329 file into the wallet (spend access: it can freeze coins), all or nothing. */
  async import(principal: Principal, alias: string, text: unknown): Promise<LabelImportResult> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    if (typeof text !== 'string') throw new ServiceError('invalid_input', 'invalid_labels', 'Send the BIP329 file as the body, Content-Type application/jsonl');
    const { records, errors } = readBip329(text, { network: NETWORKS[wallet.network], maxLabelChars: MAX_LABEL_CHARS, maxLines: MAX_LABEL_LINES });
    if (errors.length > 0) {
      const shown = errors.slice(0, 100);
      throw new ServiceError('invalid_input', 'invalid_labels', `Invalid label file: ${errors.length} faulty line(s), first line ${errors[0]!.line}: ${errors[0]!.message}; nothing was imported`, {
        errors: shown.map((e) => ({ path: `/${e.line}`, message: `line ${e.line}: ${e.message}` })),
      });
    }
    const references = new WalletReferences(await this.deps.states.view(wallet), wallet);
    const now = this.deps.now();
    return this.deps.store.transaction(async (repos) => {
      if (!(await repos.labels.lock(wallet.id))) throw walletNotFound(); // deleted meanwhile
      const current = await repos.wallets.findById(wallet.id);
      if (!current) throw walletNotFound();
      return applyRecords(repos, current, records, references, now);
    });
  }
}

async function applyRecords(repos: Repositories, wallet: StoredWallet, records: readonly Bip329Record[], references: WalletReferences, now: number): Promise<LabelImportResult> {
  const result: LabelImportResult = { imported: 0, skipped: { unknown_reference: 0, unsupported_type: 0, older: 0 } };
  const stored = new Map((await repos.labels.list(wallet.id)).map((l): [string, StoredLabel] => [`${l.type} ${l.ref}`, l]));
  const keys: WalletKeyRow[] = wallet.keys.map((k) => ({ ...k }));
  const keyIndex = new Map(keys.map((k, i) => [normalXpub(k.xpub, wallet), i]));
  let keysChanged = false;

  for (const given of records) {
    const at = given.modified ?? now;
    const record = given.type === 'addr' ? { ...given, ref: normalizeAddress(given.ref, NETWORKS[wallet.network]) } : given;
    if (record.type === 'xpub') {
      const i = keyIndex.get(normalXpub(record.ref, wallet));
      if (i === undefined) result.skipped.unknown_reference++;
      else if ((keys[i]!.labelUpdatedAt ?? 0) > at) result.skipped.older++;
      else {
        if (record.label !== undefined) keys[i] = { ...keys[i]!, label: record.label, labelUpdatedAt: at };
        keysChanged = true;
        result.imported++;
      }
      continue;
    }
    if (record.type !== 'tx' && record.type !== 'addr' && record.type !== 'output') {
      result.skipped.unsupported_type++;
      continue;
    }
    const [txid = '', voutText = ''] = record.ref.split(':');
    const known = record.type === 'tx' ? references.hasTx(record.ref) : record.type === 'addr' ? references.hasAddress(record.ref) : references.hasOutput(txid, Number(voutText));
    if (!known) {
      result.skipped.unknown_reference++;
      continue;
    }
    const key = `${record.type} ${record.ref}`;
    const previous = stored.get(key);
    if (previous && previous.updatedAt > at) {
      result.skipped.older++;
      continue;
    }
    const label = record.label ?? previous?.label ?? '';
    if (record.type === 'tx') await repos.labels.setTxLabel(wallet.id, record.ref, label, at);
    else if (record.type === 'addr') await repos.wallets.setAddressLabels(wallet.id, [{ address: record.ref, label }], at);
    else {
      const frozen = record.spendable === undefined ? (previous?.frozen ?? false) : !record.spendable;
      await repos.wallets.setUtxoFlag(wallet.id, { txid, vout: Number(voutText), frozen, label }, at);
      stored.set(key, { type: 'output', ref: record.ref, label, frozen, updatedAt: at });
    }
    if (record.type !== 'output') stored.set(key, { type: record.type, ref: record.ref, label, updatedAt: at });
    result.imported++;
  }
  if (keysChanged) await repos.wallets.updateDetails(wallet.id, { name: wallet.name, description: wallet.description, keys });
  return result;
}
