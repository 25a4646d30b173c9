/**
 * A wallet's labels as BIP329 JSON Lines: export every label (transactions, addresses, outputs, keys by
 * xpub) and import a file in one store transaction. Merge: the newer label wins (the line's `modified`, or
 * the import's time without one); references the wallet does not know are skipped and counted, and so are
 * key lines of anyone but the owner; an output with `spendable: false` is frozen. One faulty line refuses the whole file, naming every faulty line.
 */
import { decodeAddress, normalizeAddress } from '../../core/address.js';
import { readBip329InParts, writeBip329, type Bip329Output, type Bip329Record } from '../../core/bip329.js';
import { toHex } from '../../core/bytes.js';
import { encodeExtendedPublicKey, parseExtendedPublicKey } from '../../core/keys/extended-key.js';
import { NETWORKS } from '../../core/network.js';
import { parseTransaction } from '../../core/tx.js';
import { scriptOwner } from '../../engine/index.js';
import type { LabelRef } from '../../store/label-records.js';
import type { Repositories, Store, StoredLabel, StoredWallet, WalletKeyRow } from '../../store/repositories.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import { mapInParts, nextTurn } from '../turns.js';
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
    /** Key (`xpub`) lines of the wallet's keys sent by someone other than its owner: key labels are the owner's to change. */
    owner_only: number;
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

  /**
   * Imports a BIP329 file into the wallet (spend access: it can freeze coins), all or nothing. Key labels
   * change only for the owner with `wallets:manage`, as with PATCH; others' xpub lines are skipped and counted.
   * Every step over the lines runs in parts (reading, matching, merging, writing), so a file of 100,000
   * lines does not hold other requests; the store transaction holds only the merge and the writes.
   */
  async import(principal: Principal, alias: string, text: unknown): Promise<LabelImportResult> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    if (typeof text !== 'string') throw new ServiceError('invalid_input', 'invalid_labels', 'Send the BIP329 file as the body, Content-Type application/jsonl');
    const options = { network: NETWORKS[wallet.network], maxLabelChars: MAX_LABEL_CHARS, maxLines: MAX_LABEL_LINES };
    const { records, errors } = await readBip329InParts(text, options, nextTurn);
    if (errors.length > 0) {
      const shown = errors.slice(0, 100);
      throw new ServiceError('invalid_input', 'invalid_labels', `Invalid label file: ${errors.length} faulty line(s), first line ${errors[0]!.line}: ${errors[0]!.message}; nothing was imported`, {
        errors: shown.map((e) => ({ path: `/${e.line}`, message: `line ${e.line}: ${e.message}` })),
      });
    }
    const mayLabelKeys = wallet.ownerName === principal.userName && !(principal.permissions && !principal.permissions.includes('wallets:manage'));
    const matcher = new RecordMatcher(new WalletReferences(await this.deps.states.view(wallet), wallet), wallet, mayLabelKeys, this.deps.now());
    const matched = await mapInParts(records, (r) => matcher.match(r), RECORDS_PER_TURN);
    return this.deps.store.transaction(async (repos) => {
      if (!(await repos.labels.lock(wallet.id))) throw walletNotFound(); // deleted meanwhile
      const current = await repos.wallets.findById(wallet.id);
      if (!current) throw walletNotFound();
      return applyMatched(repos, current, matched, LABELS_PER_STATEMENT[this.deps.store.kind]);
    });
  }
}

/** Records matched per turn: the costliest (an address decoded twice) take 20-30 µs each, a few ms a turn. */
const RECORDS_PER_TURN = 100;
/**
 * Labels read or written per statement in the transaction, with a turn between. SQLite runs a statement on
 * this thread (100 labels: a few ms); PostgreSQL runs it in its own process, and fewer round trips are faster.
 */
const LABELS_PER_STATEMENT: Record<Store['kind'], number> = { sqlite: 100, postgres: 250 };

/** A record, matched against the wallet before the transaction: what it would change, or why it is skipped. */
type MatchedRecord =
  | { kind: 'skipped'; reason: keyof LabelImportResult['skipped'] }
  | { kind: 'key'; xpub: string; label: string | undefined; at: number }
  | { kind: 'label'; ref: LabelRef; label: string | undefined; spendable: boolean | undefined; at: number };

class RecordMatcher {
  /** A file repeats the wallet's few keys: each distinct xpub is parsed and encoded once. */
  private readonly normalXpubs = new Map<string, string | undefined>();
  private readonly walletXpubs: Set<string>;

  constructor(
    private readonly references: WalletReferences,
    private readonly wallet: StoredWallet,
    private readonly mayLabelKeys: boolean,
    private readonly now: number,
  ) {
    this.walletXpubs = new Set(wallet.keys.map((k) => normalXpub(k.xpub, wallet)));
  }

  match(record: Bip329Record): MatchedRecord {
    const at = record.modified ?? this.now;
    if (record.type === 'xpub') {
      const xpub = this.normalXpub(record.ref);
      if (xpub === undefined) return { kind: 'skipped', reason: 'unknown_reference' };
      if (!this.mayLabelKeys) return { kind: 'skipped', reason: 'owner_only' };
      return { kind: 'key', xpub, label: record.label, at };
    }
    if (record.type !== 'tx' && record.type !== 'addr' && record.type !== 'output') return { kind: 'skipped', reason: 'unsupported_type' };
    const ref = record.type === 'addr' ? normalizeAddress(record.ref, NETWORKS[this.wallet.network]) : record.ref;
    const [txid = '', voutText = ''] = ref.split(':');
    const known = record.type === 'tx' ? this.references.hasTx(ref) : record.type === 'addr' ? this.references.hasAddress(ref) : this.references.hasOutput(txid, Number(voutText));
    if (!known) return { kind: 'skipped', reason: 'unknown_reference' };
    return { kind: 'label', ref: { type: record.type, ref }, label: record.label, spendable: record.spendable, at };
  }

  /** The xpub as the wallet's keys are compared, when it is one of them. */
  private normalXpub(ref: string): string | undefined {
    if (!this.normalXpubs.has(ref)) {
      const xpub = normalXpub(ref, this.wallet);
      this.normalXpubs.set(ref, this.walletXpubs.has(xpub) ? xpub : undefined);
    }
    return this.normalXpubs.get(ref);
  }
}

/**
 * In the store transaction: the matched records merged in file order against the stored labels (the newer
 * wins), then what changed written, in parts with a turn between.
 */
async function applyMatched(repos: Repositories, wallet: StoredWallet, matched: readonly MatchedRecord[], perStatement: number): Promise<LabelImportResult> {
  const result: LabelImportResult = { imported: 0, skipped: { unknown_reference: 0, unsupported_type: 0, older: 0, owner_only: 0 } };
  const refs = matched.flatMap((m) => (m.kind === 'label' ? [m.ref] : []));
  const stored = new Map<string, StoredLabel>();
  for (let from = 0; from < refs.length; from += perStatement) {
    if (from > 0) await nextTurn();
    for (const label of await repos.labels.find(wallet.id, refs.slice(from, from + perStatement))) stored.set(`${label.type} ${label.ref}`, label);
  }
  await nextTurn();

  const keys: WalletKeyRow[] = wallet.keys.map((k) => ({ ...k }));
  const keyIndex = new Map(keys.map((k, i) => [normalXpub(k.xpub, wallet), i]));
  let keysChanged = false;
  const changed = new Map<string, StoredLabel>();
  await mapInParts(matched, (m) => {
    if (m.kind === 'skipped') {
      result.skipped[m.reason]++;
      return;
    }
    if (m.kind === 'key') {
      const i = keyIndex.get(m.xpub)!;
      if ((keys[i]!.labelUpdatedAt ?? 0) > m.at) result.skipped.older++;
      else {
        if (m.label !== undefined) keys[i] = { ...keys[i]!, label: m.label, labelUpdatedAt: m.at };
        keysChanged = true;
        result.imported++;
      }
      return;
    }
    const key = `${m.ref.type} ${m.ref.ref}`;
    const previous = stored.get(key);
    if (previous && previous.updatedAt > m.at) {
      result.skipped.older++;
      return;
    }
    const label = m.label ?? previous?.label ?? '';
    const next: StoredLabel =
      m.ref.type === 'output'
        ? { ...m.ref, label, frozen: m.spendable === undefined ? (previous?.frozen ?? false) : !m.spendable, updatedAt: m.at }
        : { ...m.ref, label, updatedAt: m.at };
    stored.set(key, next);
    changed.set(key, next);
    result.imported++;
  });

  const writes = [...changed.values()];
  for (let from = 0; from < writes.length; from += perStatement) {
    await nextTurn();
    await repos.labels.write(wallet.id, writes.slice(from, from + perStatement));
  }
  if (keysChanged) await repos.wallets.updateDetails(wallet.id, { name: wallet.name, description: wallet.description, keys });
  return result;
}

