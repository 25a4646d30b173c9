/**
 * The seven fixture wallets as the PSBT use cases see them: wallet records from wallets.json and
 * spending state from the wallet engine fed with the recorded timeline, behind a WalletReader with
 * owners (for access checks). Also signing as each cosigner would (@scure/btc-signer, fixture tprv).
 */
import { HDKey } from '@scure/bip32';
import { Transaction as SignerTransaction } from '@scure/btc-signer';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { parsePath } from '../../../src/core/keys/index.js';
import { parsePsbt } from '../../../src/core/psbt/index.js';
import { hexOf, listTransactions, listUnspent, type EngineState } from '../../../src/engine/index.js';
import { ServiceError } from '../../../src/services/errors.js';
import type { Principal } from '../../../src/services/principal.js';
import type { WalletForSpending } from '../../../src/services/wallets/index.js';
import type { Store, StoredWallet } from '../../../src/store/repositories.js';
import { loadFixture } from '../../support/fixtures.js';
import { FIXTURE_WALLET_IDS } from '../engine/support/fixture-wallets.js';
import { applyAndPersist, freshEngine, timeline, updatesTo, type MemoryRowStore } from '../engine/support/replay.js';

export { FIXTURE_WALLET_IDS };
export const wallets = loadFixture('wallets') as Record<string, any>;
export const LAST_SNAPSHOT = timeline.snapshots.length - 1;
const versions = { private: 0x04358394, public: 0x043587cf };

/** The wallet record of a fixture wallet (alias = fixture name, owned by `owner`). */
export function fixtureWalletRecord(name: string, owner = 'alice'): StoredWallet {
  const w = wallets[name];
  return {
    id: `id-${name}`,
    alias: name,
    name,
    description: '',
    ownerName: owner,
    network: 'regtest',
    receiveDescriptor: w.recv_descriptor,
    changeDescriptor: w.change_descriptor,
    addressType: w.type === 'tr' ? 'bech32m' : w.type === 'pkh' ? 'legacy' : w.type.startsWith('sh') ? 'p2sh-segwit' : 'bech32',
    sigsRequired: w.sigs_required,
    sigsTotal: w.keys.length,
    keys: w.keys.map((k: any) => ({ fingerprint: k.fingerprint, derivation: k.derivation, xpub: k.tpub, label: k.key })),
    gapLimit: 20,
    birthday: 0,
    createdAt: 0,
    revision: 0,
    tip: null,
  };
}

/**
 * Stores the fixture wallets' records (no chain rows: the reader below serves their coins), so that a PSBT
 * built from revision 0 of a wallet can be stored while that revision holds.
 */
export async function storeFixtureWallets(store: Store): Promise<void> {
  if (!(await store.users.find('alice'))) await store.users.insert({ name: 'alice', passwordHash: 'unused', isAdmin: false, createdAt: 0 });
  for (const name of FIXTURE_WALLET_IDS) await store.wallets.insert(fixtureWalletRecord(name), []);
}

/** Engine state of all fixture wallets at a snapshot of the timeline. */
export function engineAt(snapshot: number): { state: EngineState; rows: MemoryRowStore } {
  const { state, store } = freshEngine();
  let chain: string[] = [];
  for (let i = 0; i <= snapshot; i++) {
    for (const update of updatesTo(chain, i)) applyAndPersist(state, store, update);
    chain = timeline.snapshots[i].chain;
  }
  return { state, rows: store };
}

export function spendingOf(state: EngineState, rows: MemoryRowStore, name: string, snapshot: number, frozen: ReadonlySet<string> = new Set()): WalletForSpending {
  const transactions = listTransactions(state, name);
  const hexById = new Map(transactions.map((t) => [t.txid, hexOf(t)]));
  const utxos = listUnspent(state, name).map((u) => ({
    ...u,
    prevTxHex: hexById.get(u.txid)!,
    frozen: frozen.has(`${u.txid}:${u.vout}`),
  }));
  const scripts = new Map(rows.rows(name).addresses.map((a) => [a.script, { branch: a.branch, index: a.index }]));
  return {
    wallet: fixtureWalletRecord(name),
    revision: 0,
    utxos,
    tipHeight: timeline.snapshots[snapshot].tip.height,
    nextChangeIndex: rows.rows(name).sync.lastUsedChange + 1,
    transaction: (txid: string) => transactions.find((t) => t.txid === txid),
    ownerOfScript: (script) => scripts.get(script),
  };
}

/** The wallet part as PSBTs use it, over the fixture wallets at one snapshot; `alice` owns them, `bob` has read access to w_wpkh. */
export class FixtureWalletReader {
  readonly labels: { walletId: string; address: string; label: string }[] = [];
  readonly frozen = new Set<string>();
  constructor(
    public state: EngineState,
    public rows: MemoryRowStore,
    public snapshot: number,
  ) {}

  static at(snapshot: number): FixtureWalletReader {
    const { state, rows } = engineAt(snapshot);
    return new FixtureWalletReader(state, rows, snapshot);
  }

  async resolve(principal: Principal, alias: string, need: 'read' | 'spend' | 'owner'): Promise<StoredWallet> {
    const known = (FIXTURE_WALLET_IDS as readonly string[]).includes(alias);
    const allowed = principal.userName === 'alice' || (principal.userName === 'bob' && alias === 'w_wpkh' && need === 'read');
    if (!known || !allowed) throw new ServiceError('not_found', 'wallet_not_found', `Wallet ${alias} not found`);
    return fixtureWalletRecord(alias);
  }

  async forSpending(walletId: string): Promise<WalletForSpending> {
    const name = walletId.replace(/^id-/, '');
    return spendingOf(this.state, this.rows, name, this.snapshot, this.frozen);
  }

  addressLabelsWrite(walletId: string, labels: { address: string; label: string }[]): () => Promise<void> {
    return async () => {
      for (const l of labels) this.labels.push({ walletId, ...l });
    };
  }
}

/** The private key of a cosigner for one of its derivations, from the account tprv. */
function signerKey(account: any, path: readonly number[]): Uint8Array {
  const depth = parsePath(account.derivation).length;
  let node = HDKey.fromExtendedKey(account.tprv, versions);
  for (const index of path.slice(depth)) node = node.deriveChild(index);
  return node.privateKey!;
}

/** A copy of the PSBT signed on every input by cosigner `keyIndex` of the wallet, as base64. */
export function signAsCosigner(base64: string, name: string, keyIndex: number, psbtVersion: 0 | 2 = 0): string {
  const wallet = wallets[name];
  const account = wallet.keys[keyIndex];
  const psbt = parsePsbt(base64);
  const signer = SignerTransaction.fromPSBT(fromHex(toHex(Buffer.from(base64, 'base64'))));
  psbt.inputs.forEach((input, i) => {
    const origin =
      wallet.type === 'tr'
        ? input.tapBip32Derivations.find((d) => toHex(d.fingerprint) === account.fingerprint)
        : input.bip32Derivations.find((d) => toHex(d.fingerprint) === account.fingerprint);
    if (!origin) throw new Error(`input ${i} has no derivation of key ${account.key}`);
    if (!signer.signIdx(signerKey(account, origin.path), i)) throw new Error(`cosigner ${account.key} could not sign input ${i}`);
  });
  return Buffer.from(signer.toPSBT(psbtVersion)).toString('base64');
}
