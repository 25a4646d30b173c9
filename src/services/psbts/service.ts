/**
 * The PSBT use cases of a wallet: create (coins reserved in the same store transaction as the PSBT),
 * list, read, merge cosigners' signatures, delete, finalize and broadcast.
 */
import type { Broadcaster, FeeEstimator } from '../../chain/types.js';
import { ChainError } from '../../chain/types.js';
import { CoreError } from '../../core/errors.js';
import { getNetwork } from '../../core/network.js';
import {
  PsbtError,
  extractVerifiedTransaction,
  finalizePsbt,
  mergeCosignerPsbt,
  parsePsbt,
  psbtRecord,
  psbtToBase64,
  psbtTxid,
  serializePsbt,
  type Psbt,
  type PsbtRecord,
} from '../../core/psbt/index.js';
import { parseTransaction, serializeTransaction, txid as transactionId } from '../../core/tx.js';
import { toHex } from '../../core/bytes.js';
import type { Store, StoredPsbt } from '../../store/repositories.js';
import { StoreConflictError } from '../../store/repositories.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import type { PsbtReservations, WalletReader, WalletRecord } from '../wallet-access.js';
import { planPsbt, walletKeys, type WalletKeys } from './plan.js';
import { checkFeeRate, parseCreateRequest, type CreatePsbtInput } from './request.js';

/** What the PSBT use cases need of the chain backend. */
export type PsbtChain = FeeEstimator & Broadcaster;

/** The wallet part and the chain backend, which may be connected after construction (see `connect`). */
export interface PsbtConnections {
  wallets?: WalletReader;
  /** The chain backend, or undefined when none is configured (fees and broadcast then answer 503). */
  chain?: () => PsbtChain | null | undefined;
}

export interface PsbtServiceDeps extends PsbtConnections {
  store: Store;
  /** Highest fee rate accepted, sat/vB. */
  maxFeeRate: number;
  now?: () => number;
}

/** Fee estimate target for PSBTs created without a fee rate. */
export const FEE_ESTIMATE_BLOCKS = 6;
/** Selection retries when a concurrent creation took a chosen coin first. */
const MAX_RESERVATION_ATTEMPTS = 8;

const TXID = /^[0-9a-f]{64}$/;
const outpointKey = (txid: string, vout: number) => `${txid}:${vout}`;
/**
 * The id of a transaction with its signatures removed: what the PSBT of it is keyed by. Legacy and
 * P2SH inputs put signatures in scriptSig, so the network txid differs from the PSBT's.
 */
export function unsignedTxid(hex: string): string {
  const tx = parseTransaction(hex);
  return transactionId({ ...tx, inputs: tx.inputs.map((i) => ({ ...i, scriptSig: new Uint8Array(0), witness: [] })) });
}

const satPerKvb = (satPerVb: number): bigint => BigInt(Math.round(satPerVb * 1000));

function chainUnavailable(error: unknown): ServiceError {
  const reason = error instanceof ChainError ? `: ${error.message}` : '';
  return new ServiceError('unavailable', 'chain_unavailable', `The chain backend did not answer${reason}`);
}

function psbtNotFound(txid: string): ServiceError {
  return new ServiceError('not_found', 'psbt_not_found', `No pending PSBT ${txid} in this wallet`);
}

export interface BroadcastResult {
  txid: string;
  hex: string;
}

export class PsbtService implements PsbtReservations {
  private readonly now: () => number;
  private readonly keysCache = new Map<string, WalletKeys>();
  /** Network txid -> unsigned txid (transactions never change under their txid). */
  private readonly unsignedIds = new Map<string, string>();
  /** Decoded records by wallet and txid, valid while the stored PSBT text is the same. */
  private readonly records = new Map<string, { psbt: string; threshold: number; record: PsbtRecord }>();
  /** What the wallet's chain state says about PSBTs, by wallet, for the wallet revision it was read at. */
  private readonly chainViews = new Map<string, { revision: number; seen: Set<string>; spentConfirmed: Set<string> }>();

  private walletReader: WalletReader | undefined;
  private chainOf: () => PsbtChain | null | undefined;

  constructor(private readonly deps: PsbtServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.walletReader = deps.wallets;
    this.chainOf = deps.chain ?? (() => undefined);
  }

  /** Connects the wallet part (access checks, spendable coins, labels) and the chain backend. */
  connect(connections: PsbtConnections): void {
    if (connections.wallets) this.walletReader = connections.wallets;
    if (connections.chain) this.chainOf = connections.chain;
  }

  private get wallets(): WalletReader {
    if (!this.walletReader) throw new ServiceError('unavailable', 'wallets_unavailable', 'Wallets are not available on this instance');
    return this.walletReader;
  }

  private keysOf(wallet: WalletRecord): WalletKeys {
    const cacheKey = `${wallet.receiveDescriptor}|${wallet.changeDescriptor}`;
    let keys = this.keysCache.get(cacheKey);
    if (!keys) {
      keys = walletKeys(wallet.receiveDescriptor, wallet.changeDescriptor, getNetwork(wallet.network));
      if (this.keysCache.size >= 64) this.keysCache.delete(this.keysCache.keys().next().value!);
      this.keysCache.set(cacheKey, keys);
    }
    return keys;
  }

  private requireChain(): PsbtChain {
    const chain = this.chainOf();
    if (!chain) throw new ServiceError('unavailable', 'chain_unavailable', 'No chain backend is configured');
    return chain;
  }

  /** The record of a stored PSBT (the contract's shape). Decoding is cached: previous transactions make it costly. */
  recordOf(wallet: WalletRecord, stored: StoredPsbt): PsbtRecord {
    const key = `${stored.walletId}:${stored.txid}`;
    const cached = this.records.get(key);
    if (cached && cached.psbt === stored.psbt && cached.threshold === wallet.sigsRequired) return cached.record;
    const record = this.decodeRecord(wallet, stored);
    if (this.records.size >= 2000) this.records.delete(this.records.keys().next().value!);
    this.records.set(key, { psbt: stored.psbt, threshold: wallet.sigsRequired, record });
    return record;
  }

  private decodeRecord(wallet: WalletRecord, stored: StoredPsbt): PsbtRecord {
    return psbtRecord(parsePsbt(stored.psbt), {
      network: getNetwork(wallet.network),
      changeOutputs: stored.changeOutputs,
      fullSizeVbytes: stored.fullSize,
      threshold: wallet.sigsRequired,
      time: stored.createdAt / 1000,
    });
  }

  async create(principal: Principal, alias: string, body: unknown): Promise<{ txid: string; record: PsbtRecord }> {
    const wallet = await this.wallets.resolve(principal, alias, 'spend');
    const network = getNetwork(wallet.network);
    const request = parseCreateRequest(body as CreatePsbtInput, network);
    const { feeRate, incrementalRate } = await this.feeRates(request.feeRate);
    // Stored with the PSBT, in its transaction: a PSBT is never left without its labels.
    const writeLabels = this.wallets.prepareAddressLabels(wallet.id, request.recipients.filter((r) => r.label !== undefined).map((r) => ({ address: r.address, label: r.label! })));
    const spending = await this.wallets.loadForSpending(wallet.id);
    const keys = this.keysOf(wallet);

    for (let attempt = 1; ; attempt++) {
      const reserved = new Set((await this.deps.store.psbts.reservations(wallet.id)).map((r) => outpointKey(r.txid, r.vout)));
      const plan = planPsbt(request, { spending, keys, network, reserved, feeRate, incrementalRate });
      const txid = psbtTxid(plan.psbt);
      const now = this.now();
      const stored: StoredPsbt = {
        walletId: wallet.id,
        txid,
        psbt: psbtToBase64(plan.psbt),
        changeOutputs: plan.changeOutputs,
        fullSize: plan.fullSize,
        status: 'pending',
        createdAt: now,
        updatedAt: now,
        createdBy: principal.userName,
      };
      try {
        await this.deps.store.transaction(async (repos) => {
          await repos.psbts.insert(stored, plan.inputs);
          await writeLabels(repos);
        });
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
        const nowReserved = new Set((await this.deps.store.psbts.reservations(wallet.id)).map((r) => outpointKey(r.txid, r.vout)));
        const taken = plan.inputs.some((o) => nowReserved.has(outpointKey(o.txid, o.vout)));
        if (!taken) throw new ServiceError('conflict', 'psbt_exists', `PSBT ${txid} already exists`);
        // Another creation reserved one of these coins first: select again without it.
        if (attempt >= MAX_RESERVATION_ATTEMPTS || request.inputs) {
          throw new ServiceError('conflict', 'coins_reserved', 'The chosen coins were reserved by another PSBT; try again');
        }
        continue;
      }
      return { txid, record: this.recordOf(wallet, stored) };
    }
  }

  private async feeRates(requested: bigint | undefined): Promise<{ feeRate: bigint; incrementalRate: bigint }> {
    const chain = this.requireChain();
    let relay;
    let estimate;
    try {
      relay = await chain.getRelayFees();
      estimate = requested === undefined ? await chain.estimateFee(FEE_ESTIMATE_BLOCKS) : undefined;
    } catch (error) {
      throw chainUnavailable(error);
    }
    let feeRate = requested;
    if (feeRate === undefined) {
      if (!estimate) {
        throw new ServiceError('unavailable', 'fee_estimate_unavailable', 'The chain backend has no fee estimate yet; give fee_rate');
      }
      feeRate = BigInt(estimate.satPerKvb);
    }
    checkFeeRate(feeRate, { minimum: satPerKvb(relay.minRelaySatPerVb), maximum: BigInt(this.deps.maxFeeRate) * 1000n });
    return { feeRate, incrementalRate: satPerKvb(relay.incrementalSatPerVb) };
  }

  /**
   * Brings pending PSBTs up to date with the wallet's transactions and returns those still pending: one
   * whose transaction is seen leaves the pending list; one whose coins were spent elsewhere by a confirmed
   * transaction becomes invalid, and its other coins are freed. A coin merely absent from the view (a wallet
   * scanning again after a rescan, or a funding transaction reorged out that may be mined again) is no proof
   * of a spend: such a PSBT stays pending, and its reservations with it. A pending PSBT's coins are its
   * reservations (written with it), so no PSBT text is decoded here.
   */
  private async reconcile(walletId: string, pending: StoredPsbt[]): Promise<StoredPsbt[]> {
    if (pending.length === 0) return pending;
    const view = await this.chainView(walletId);
    const only = pending.length === 1 ? pending[0]!.txid : undefined;
    const spentCoins = new Set<string>();
    for (const r of await this.deps.store.psbts.reservations(walletId, only)) {
      if (view.spentConfirmed.has(outpointKey(r.txid, r.vout))) spentCoins.add(r.psbtTxid);
    }
    const still: StoredPsbt[] = [];
    for (const stored of pending) {
      const status = view.seen.has(stored.txid) ? 'broadcast' : spentCoins.has(stored.txid) ? 'invalid' : undefined;
      if (status) await this.deps.store.psbts.setStatus(walletId, stored.txid, status, this.now());
      else still.push(stored);
    }
    return still;
  }

  /**
   * The unsigned txids of the wallet's live transactions, and the coins its confirmed transactions spend.
   * A coin spent only in the mempool keeps its PSBT pending: a replacement may still win. Kept per wallet
   * revision, so listing does not reload the wallet while its chain state is unchanged.
   */
  private async chainView(walletId: string): Promise<{ seen: Set<string>; spentConfirmed: Set<string> }> {
    const revision = await this.deps.store.wallets.revision(walletId);
    const cached = this.chainViews.get(walletId);
    if (cached && revision !== undefined && cached.revision === revision) return cached;
    const state = await this.wallets.loadForSpending(walletId);
    const seen = new Set<string>();
    const spentConfirmed = new Set<string>();
    for (const t of state.transactions) {
      if (t.status === 'dropped') continue;
      let id = this.unsignedIds.get(t.txid);
      if (id === undefined) {
        id = unsignedTxid(t.hex);
        if (this.unsignedIds.size >= 100_000) this.unsignedIds.clear();
        this.unsignedIds.set(t.txid, id);
      }
      seen.add(id);
      if (t.status === 'confirmed') for (const input of parseTransaction(t.hex).inputs) spentConfirmed.add(outpointKey(input.txid, input.vout));
    }
    const view = { revision: revision ?? -1, seen, spentConfirmed };
    if (revision !== undefined) {
      if (this.chainViews.size >= 256) this.chainViews.delete(this.chainViews.keys().next().value!);
      this.chainViews.set(walletId, view);
    }
    return view;
  }

  /** The wallet's pending PSBTs, newest first. */
  async list(principal: Principal, alias: string): Promise<{ txid: string; record: PsbtRecord }[]> {
    const wallet = await this.wallets.resolve(principal, alias, 'read');
    const pending = await this.reconcile(wallet.id, await this.deps.store.psbts.list(wallet.id, 'pending'));
    return pending.map((stored) => ({ txid: stored.txid, record: this.recordOf(wallet, stored) }));
  }

  private async findPending(wallet: WalletRecord, txid: string): Promise<StoredPsbt> {
    const id = txid.toLowerCase();
    if (!TXID.test(id)) throw psbtNotFound(txid);
    const found = await this.deps.store.psbts.find(wallet.id, id);
    const [stored] = found?.status === 'pending' ? await this.reconcile(wallet.id, [found]) : [];
    if (!stored) throw psbtNotFound(txid);
    return stored;
  }

  async get(principal: Principal, alias: string, txid: string): Promise<{ record: PsbtRecord; psbt: Uint8Array; base64: string }> {
    const wallet = await this.wallets.resolve(principal, alias, 'read');
    const stored = await this.findPending(wallet, txid);
    const psbt = parsePsbt(stored.psbt);
    return { record: this.recordOf(wallet, stored), psbt: serializePsbt(psbt), base64: stored.psbt };
  }

  /** Merges a cosigner's copy (base64 or binary) into the stored PSBT. */
  async update(principal: Principal, alias: string, txid: string, copy: string | Uint8Array): Promise<PsbtRecord> {
    const wallet = await this.wallets.resolve(principal, alias, 'spend');
    const stored = await this.findPending(wallet, txid);
    let incoming: Psbt;
    try {
      incoming = parsePsbt(typeof copy === 'string' ? copy.trim() : copy);
    } catch (error) {
      if (error instanceof CoreError) throw new ServiceError('invalid_input', 'invalid_psbt', `psbt: ${error.message}`, { errors: [{ path: '/psbt', message: error.message }] });
      throw error;
    }
    let merged: Psbt;
    try {
      merged = mergeCosignerPsbt(parsePsbt(stored.psbt), incoming);
    } catch (error) {
      if (error instanceof PsbtError && error.code === 'different_transaction') {
        throw new ServiceError('conflict', 'different_transaction', 'The PSBT is not a copy of the same unsigned transaction');
      }
      if (error instanceof CoreError) throw new ServiceError('unprocessable', 'invalid_signature', error.message);
      throw error;
    }
    const base64 = psbtToBase64(merged);
    const updatedAt = this.now();
    await this.deps.store.psbts.updatePsbt(wallet.id, stored.txid, base64, updatedAt);
    return this.recordOf(wallet, { ...stored, psbt: base64, updatedAt });
  }

  async delete(principal: Principal, alias: string, txid: string): Promise<void> {
    const wallet = await this.wallets.resolve(principal, alias, 'spend');
    const stored = await this.findPending(wallet, txid);
    await this.deps.store.psbts.delete(wallet.id, stored.txid);
  }

  /** Finalizes, verifies every signature and broadcasts. The PSBT stays pending until its transaction is seen. */
  async broadcast(principal: Principal, alias: string, txid: string): Promise<BroadcastResult> {
    const wallet = await this.wallets.resolve(principal, alias, 'spend');
    const stored = await this.findPending(wallet, txid);
    const chain = this.requireChain();
    const finalized = finalizePsbt(parsePsbt(stored.psbt));
    if (!finalized.complete) {
      const reasons = finalized.pending.map((p) => `input ${p.input}: ${p.reason}`).join('; ');
      throw new ServiceError('unprocessable', 'not_enough_signatures', `The PSBT cannot be finalized yet (${reasons})`);
    }
    let hex: string;
    try {
      hex = toHex(serializeTransaction(extractVerifiedTransaction(finalized.psbt)));
    } catch (error) {
      if (error instanceof CoreError) throw new ServiceError('unprocessable', 'invalid_signature', error.message);
      throw error;
    }
    await this.deps.store.psbts.updatePsbt(wallet.id, stored.txid, psbtToBase64(finalized.psbt), this.now());
    let broadcastTxid: string;
    try {
      broadcastTxid = await chain.broadcast(hex);
    } catch (error) {
      if (error instanceof ChainError && error.code.startsWith('tx_')) {
        throw new ServiceError('unprocessable', 'broadcast_rejected', `The node rejected the transaction: ${error.reason ?? error.message}`);
      }
      if (error instanceof ChainError && error.code === 'broadcast_unknown') {
        throw new ServiceError('unavailable', 'broadcast_unknown', 'The node did not answer; the transaction may or may not have been accepted');
      }
      throw chainUnavailable(error);
    }
    return { txid: broadcastTxid, hex };
  }

  /** Map `txid:vout` -> txid of the pending PSBT holding it (wallet details' `reserved_by`). */
  async reservedOutpoints(walletId: string): Promise<Map<string, string>> {
    const rows = await this.deps.store.psbts.reservations(walletId);
    return new Map(rows.map((r) => [outpointKey(r.txid, r.vout), r.psbtTxid]));
  }

  /** Number of pending PSBTs (wallet details' `pending_psbts`). */
  async pendingCount(walletId: string): Promise<number> {
    return (await this.deps.store.psbts.list(walletId, 'pending')).length;
  }

  /** Removes every PSBT and reservation of a wallet (call when the wallet is deleted). */
  async forgetWallet(walletId: string): Promise<void> {
    await this.deps.store.psbts.deleteWallet(walletId);
  }
}

