/**
 * What only a wallet's owner does: create (import) it, change its name, labels, gap limit and sharing,
 * scan it again, delete it.
 */
import { randomUUID } from 'node:crypto';
import { CoreError } from '../../core/errors.js';
import type { NetworkName } from '../../core/network.js';
import { StoreConflictError, type Store, type StoredWallet, type WalletShare } from '../../store/repositories.js';
import { ServiceError, invalidField } from '../errors.js';
import type { Principal } from '../principal.js';
import { birthdayHeight } from '../wallet-birthday.js';
import type { WalletDetails } from '../wallet-format.js';
import {
  aliasFromName,
  checkAlias,
  checkBirthday,
  checkDescription,
  checkGapLimit,
  checkKeyLabels,
  checkLabel,
  checkName,
  checkShares,
  resolveKeys,
  MAX_LABEL_CHARS,
  type Birthday,
  type ShareInput,
  type WalletCreateInput,
  type WalletUpdateInput,
} from '../wallet-input.js';
import type { WalletLimits } from '../wallet-limits.js';
import type { WalletScriptsCache, WalletStateCache } from '../wallet-state.js';
import type { WalletAccess } from './access.js';
import { nameOfUnnamedFile, readImport } from './files.js';
import type { WalletSetup } from '../../core/wallet-files/index.js';
import type { ChainAccess, WalletReads } from './reads.js';

export function chainUnavailable(detail?: string): ServiceError {
  return new ServiceError('unavailable', 'chain_unavailable', detail ? `The chain backend is unavailable: ${detail}` : 'No chain backend is configured');
}

export interface WalletAdminDeps {
  store: Store;
  network: NetworkName;
  access: WalletAccess;
  reads: WalletReads;
  chain: ChainAccess;
  states: WalletStateCache;
  scripts: WalletScriptsCache;
  /** How many wallets a user may own, and how large a gap limit may be. */
  limits: WalletLimits;
  /** Starts scanning a new or rescanned wallet now rather than at the next sync pass. */
  scans: { requestPass(): void };
  now: () => number;
}

export class WalletAdmin {
  constructor(private readonly deps: WalletAdminDeps) {}

  async create(principal: Principal, input: WalletCreateInput): Promise<WalletDetails> {
    await this.deps.limits.checkCreate(principal, input);
    // A wallet setup file gives the keys and, where the request gives none, the name, key labels and birthday.
    const imported = input.import !== undefined && input.import !== null ? this.importOf(input) : undefined;
    const name = checkName(input.name ?? imported?.name ?? (imported ? await this.nameOfUnnamed(principal, imported, input.alias) : undefined));
    const givenAlias = checkAlias(input.alias);
    const description = checkDescription(input.description);
    const gapLimit = checkGapLimit(input.gap_limit);
    const birthday = input.birthday === undefined && imported?.birthday !== undefined ? checkBirthday(imported.birthday) : checkBirthday(input.birthday);
    const shares = checkShares(input.shared_with) ?? [];
    const { descriptors, policyLabels } = imported ? { descriptors: imported.descriptors, policyLabels: [] } : resolveKeys(input, this.deps.network);
    const keyLabels = checkKeyLabels(input.key_labels, '/key_labels');
    const fileLabels = imported?.keyLabels.map((l) => (l === undefined ? undefined : l.slice(0, MAX_LABEL_CHARS))) ?? [];
    for (const [i, label] of policyLabels.entries()) if (label !== undefined) checkLabel(label, `/policy/keys/${i}/label`);
    await this.checkShareUsers(principal, shares);
    const startHeight = await this.birthdayHeight(birthday);

    const keys = descriptors.info.keys.map((k, i) => ({
      fingerprint: k.fingerprint,
      derivation: k.derivation,
      xpub: k.xpub,
      label: policyLabels[i] ?? keyLabels.find((l) => l.fingerprint === k.fingerprint)?.label ?? fileLabels[i] ?? '',
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
      birthday: startHeight,
      createdAt: this.deps.now(),
      revision: 0,
      tip: null,
    };
    const shareRows: WalletShare[] = shares.map((s) => ({ userName: s.userName, access: s.access }));
    const stored = await this.insertWithAlias(base, givenAlias, name, shareRows);
    // The addresses shown come from the descriptors as checked above, not parsed again.
    if ('derivers' in descriptors && descriptors.derivers) this.deps.scripts.adopt(stored, descriptors.derivers);
    this.deps.scans.requestPass();
    return this.deps.reads.newWalletDetails(stored);
  }

  private async nameOfUnnamed(principal: Principal, setup: WalletSetup, alias: unknown): Promise<string> {
    const owned = (await this.deps.store.wallets.listAccessible(principal.userName)).filter((w) => w.access === 'owner');
    return nameOfUnnamedFile(setup, alias, owned.map((w) => w.wallet.name));
  }

  /** The wallet of the request's `import`; keys given beside it would be ambiguous. */
  private importOf(input: WalletCreateInput): WalletSetup {
    const alongside = (['descriptor', 'recv_descriptor', 'change_descriptor', 'policy'] as const).find((k) => input[k] !== undefined && input[k] !== null);
    if (alongside) throw invalidField(`/${alongside}`, 'cannot be given with import: the file gives the keys');
    return readImport(input, this.deps.network);
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

  /** Height to start scanning from. */
  private async birthdayHeight(birthday: Birthday): Promise<number> {
    if (birthday.kind === 'height') return birthday.height;
    const source = this.deps.chain.source;
    if (!source) throw chainUnavailable();
    try {
      return await birthdayHeight(source, birthday);
    } catch (error) {
      if (error instanceof CoreError) throw chainUnavailable(error.message);
      throw error;
    }
  }

  async update(principal: Principal, alias: string, input: WalletUpdateInput): Promise<WalletDetails> {
    const wallet = await this.deps.access.resolve(principal, alias, 'owner');
    const name = input.name === undefined ? wallet.name : checkName(input.name);
    const description = input.description === undefined ? wallet.description : checkDescription(input.description);
    const gapLimit = input.gap_limit === undefined ? wallet.gapLimit : checkGapLimit(input.gap_limit);
    this.deps.limits.checkGapLimit(gapLimit);
    const labels = checkKeyLabels(input.labels, '/labels');
    const keys = wallet.keys.map((k) => {
      const label = labels.find((l) => l.fingerprint === k.fingerprint)?.label ?? k.label;
      // The label's time lets a BIP329 import tell which label is newer.
      return label === k.label ? k : { ...k, label, labelUpdatedAt: this.deps.now() };
    });
    const shares = checkShares(input.shared_with);
    if (shares) await this.checkShareUsers(principal, shares);
    await this.deps.store.transaction(async (repos) => {
      await repos.wallets.updateDetails(wallet.id, { name, description, keys });
      if (gapLimit !== wallet.gapLimit) await repos.wallets.updateGapLimit(wallet.id, gapLimit);
      if (shares) await repos.wallets.replaceShares(wallet.id, shares);
    });
    const updated = await this.deps.store.wallets.findById(wallet.id);
    return this.deps.reads.detailsOf(updated ?? { ...wallet, name, description, keys });
  }

  /** Removes the wallet with every row about it, its PSBTs and their coin reservations, in one transaction. */
  async delete(principal: Principal, alias: string): Promise<void> {
    const wallet = await this.deps.access.resolve(principal, alias, 'owner');
    await this.deps.store.transaction(async (repos) => {
      await repos.wallets.delete(wallet.id);
      await repos.psbts.deleteWallet(wallet.id);
    });
    this.deps.states.forget(wallet.id);
    this.deps.scripts.forget(wallet.id);
  }

  /** Drops the wallet's chain rows; the sync scans again from `fromHeight` (default: its birthday). */
  async rescan(principal: Principal, alias: string, fromHeight?: number): Promise<{ alias: string; from: number }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'owner');
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
    this.deps.states.forget(wallet.id);
    this.deps.scripts.forget(wallet.id); // the scripts read from the dropped rows: derived again
    this.deps.scans.requestPass();
    return { alias: wallet.alias, from };
  }
}
