/**
 * The PSBT use cases of a wallet: create (coins reserved in the same store transaction as the PSBT),
 * list, read, merge cosigners' signatures, delete, finalize and broadcast. Every change of a stored PSBT
 * is a compare-and-set on its version, redone on the current version when another writer came first.
 * Reads never write: the sync moves PSBTs with the chain (chain-reconciler.ts).
 */
import type { Broadcaster, FeeEstimator } from '../../chain/types.js';
import { ChainError } from '../../chain/types.js';
import { CoreError } from '../../core/errors.js';
import { getNetwork } from '../../core/network.js';
import {
  PsbtError,
  extractTransaction,
  extractVerifiedTransaction,
  finalSignerKeys,
  finalizePsbt,
  parsePsbt,
  parsePsbtInSteps,
  psbtToBase64,
  psbtTxid,
  serializePsbt,
  serializePsbtV2,
  startCosignerMerge,
  type Psbt,
} from '../../core/psbt/index.js';
import { psbtRecord, psbtRecordInSteps, type PsbtRecord, type PsbtRecordOptions } from './record.js';
import { serializeTransaction, txid as transactionId } from '../../core/tx.js';
import { toHex } from '../../core/bytes.js';
import { hexOf } from '../../engine/index.js';
import { base64 } from '@scure/base';
import type { PsbtStatus, Store, StoredPsbt, StoredWallet } from '../../store/repositories.js';
import { StoreConflictError } from '../../store/repositories.js';
import { ServiceError } from '../errors.js';
import { nextTurn, runInParts } from '../turns.js';
import type { Principal } from '../principal.js';
import type { WalletAccess, WalletCoins, WalletForSpending } from '../wallets/index.js';
import { newEvent } from '../events/types.js';
import { psbtFacts, signerFingerprints } from '../events/psbt-events.js';
import { settle } from './chain-reconciler.js';
import { planPsbt, spendableTotal, walletKeys, type WalletKeys } from './plan.js';
import { choosePath, lockReached, outputPlansOf, spendableFrom, timelockNotMet } from './spending-path.js';
import { pathId } from '../miniscript-wallet.js';
import type { OutputSpendPlan } from '../../core/spend-plan.js';
import { checkFeeRate, parseCreateRequest, type CreatePsbtInput } from './request.js';
import { unsignedTxid } from './unsigned-txid.js';
import { replacementDraft, type ReplacementDraft } from './replacement-draft.js';

/** What the PSBT use cases need of the chain backend. */
export type PsbtChain = FeeEstimator & Broadcaster;

export interface PsbtServiceDeps {
  store: Store;
  access: Pick<WalletAccess, 'resolve'>;
  coins: Pick<WalletCoins, 'forSpending' | 'addressLabelsWrite'>;
  /** The chain backend, or null when none is configured (fees and broadcast then answer 503). */
  chain: () => PsbtChain | null;
  /** Highest fee rate accepted, sat/vB. */
  maxFeeRate: number;
  /** Most pending PSBTs one wallet may hold. */
  maxPending: number;
  /** Miniscript wallets: a refresh spends the coins whose recovery opens within this many blocks. */
  timelockWarningBlocks?: number;
  now?: () => number;
}

/** Fee estimate target for PSBTs created without a fee rate. */
export const FEE_ESTIMATE_BLOCKS = 6;
/** Creation attempts when a concurrent creation took a chosen coin first, or the sync changed the wallet. */
const MAX_CREATE_ATTEMPTS = 8;
/** Compare-and-set attempts on one PSBT: each failed one means another writer's change went in. */
const MAX_CHANGE_ATTEMPTS = 100;

const TXID = /^[0-9a-f]{64}$/;
const outpointKey = (txid: string, vout: number) => `${txid}:${vout}`;
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

/** A stored PSBT whatever became of it; `finalSigners[i]`: the hex keys whose signatures finalized input i carries. */
export interface PsbtOutcome {
  status: PsbtStatus;
  record: PsbtRecord;
  base64: string;
  sentTxid: string | null;
  finalSigners: string[][];
}

/** The hex keys whose signatures each finalized input carries (empty for the others), one input a step. */
function* finalSignersInSteps(psbt: Psbt): Generator<void, string[][]> {
  const signers: string[][] = [];
  for (let index = 0; index < psbt.inputs.length; index++) {
    signers.push(finalSignerKeys(psbt, index).map(toHex));
    yield;
  }
  return signers;
}

function psbtBusy(txid: string): ServiceError {
  return new ServiceError('conflict', 'psbt_busy', `PSBT ${txid} is being changed by others; try again`);
}

export class PsbtService {
  private readonly now: () => number;
  private readonly keysCache = new Map<string, WalletKeys>();
  /** Decoded records by wallet and txid, valid while the stored PSBT text is the same. */
  private readonly records = new Map<string, { psbt: string; threshold: number; record: PsbtRecord }>();

  constructor(private readonly deps: PsbtServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  private keysOf(wallet: StoredWallet): WalletKeys {
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
    const chain = this.deps.chain();
    if (!chain) throw new ServiceError('unavailable', 'chain_unavailable', 'No chain backend is configured');
    return chain;
  }

  /** The record of a stored PSBT (the contract's shape). Decoding is cached: previous transactions make it costly. */
  recordOf(wallet: StoredWallet, stored: StoredPsbt): PsbtRecord {
    const cached = this.cachedRecord(wallet, stored);
    if (cached) return cached;
    const parsed = parsePsbt(stored.psbt);
    return this.keepRecord(wallet, stored, psbtRecord(parsed, this.recordOptions(wallet, stored, parsed)));
  }

  /** `recordOf` for a PSBT already parsed, decoded in parts: a PSBT of a thousand inputs takes a good part of a second. */
  private async recordInParts(wallet: StoredWallet, stored: StoredPsbt, parsed: Psbt): Promise<PsbtRecord> {
    const cached = this.cachedRecord(wallet, stored);
    return cached ?? this.keepRecord(wallet, stored, await runInParts(psbtRecordInSteps(parsed, this.recordOptions(wallet, stored, parsed), stored.psbt)));
  }

  private cachedRecord(wallet: StoredWallet, stored: StoredPsbt): PsbtRecord | undefined {
    const cached = this.records.get(`${stored.walletId}:${stored.txid}`);
    return cached && cached.psbt === stored.psbt && cached.threshold === wallet.sigsRequired ? cached.record : undefined;
  }

  private keepRecord(wallet: StoredWallet, stored: StoredPsbt, record: PsbtRecord): PsbtRecord {
    if (this.records.size >= 2000) this.records.delete(this.records.keys().next().value!);
    this.records.set(`${stored.walletId}:${stored.txid}`, { psbt: stored.psbt, threshold: wallet.sigsRequired, record });
    return record;
  }

  private recordOptions(wallet: StoredWallet, stored: StoredPsbt, parsed: Psbt): PsbtRecordOptions {
    return {
      network: getNetwork(wallet.network),
      changeOutputs: stored.changeOutputs,
      fullSizeVbytes: stored.fullSize,
      threshold: wallet.sigsRequired,
      time: stored.createdAt / 1000,
      ...this.pathOptions(wallet, parsed, stored.spendingPath ?? 0),
    };
  }

  /** A miniscript wallet's PSBT: signatures counted toward its spending path, whose threshold it needs. */
  private pathOptions(wallet: StoredWallet, psbt: Psbt, pathIndex: number): Partial<PsbtRecordOptions> {
    const keys = this.keysOf(wallet);
    if (!keys.miniscript) return {};
    const path = keys.miniscript.receive.plan.paths[pathIndex];
    if (!path) return {};
    return { threshold: path.signers.k, outputPlans: outputPlansOf(psbt, keys.miniscript, pathIndex), spendingPath: pathId(pathIndex) };
  }

  /** Plans of a miniscript wallet's inputs (every path), which finalization and signature checks read; undefined for the fixed shapes. */
  private outputPlans(wallet: StoredWallet, psbt: Psbt): (OutputSpendPlan | undefined)[] | undefined {
    const keys = this.keysOf(wallet);
    return keys.miniscript ? outputPlansOf(psbt, keys.miniscript) : undefined;
  }

  async create(principal: Principal, alias: string, body: unknown): Promise<{ txid: string; record: PsbtRecord }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    const network = getNetwork(wallet.network);
    const request = parseCreateRequest(body as CreatePsbtInput, network);
    const { feeRate, incrementalRate } = await this.feeRates(request.feeRate);
    // Stored with the PSBT, in its transaction: a PSBT is never left without its labels.
    const writeLabels = this.deps.coins.addressLabelsWrite(wallet.id, request.recipients.filter((r) => r.label !== undefined).map((r) => ({ address: r.address, label: r.label! })));
    const keys = this.keysOf(wallet);

    for (let attempt = 1; ; attempt++) {
      const spending = await this.deps.coins.forSpending(wallet.id);
      const { reserved, takenOver } = await this.reservedCoins(wallet.id, spending, request.replaces);
      const plan = planPsbt(request, { spending, keys, network, reserved, feeRate, incrementalRate, timelockWarningBlocks: this.deps.timelockWarningBlocks });
      const txid = psbtTxid(plan.psbt);
      const now = this.now();
      const stored: Omit<StoredPsbt, 'version'> = {
        walletId: wallet.id,
        txid,
        psbt: psbtToBase64(plan.psbt),
        changeOutputs: plan.changeOutputs,
        fullSize: plan.fullSize,
        status: 'pending',
        createdAt: now,
        updatedAt: now,
        createdBy: principal.userName,
        ...(plan.chosen && { spendingPath: plan.chosen.index }),
      };
      let outcome: 'stored' | 'wallet_changed' | 'coins_taken' | 'too_many';
      try {
        outcome = await this.deps.store.transaction(async (repos) => {
          // The coins were chosen from one revision of the wallet: a sync write since then (a coin spent,
          // a PSBT settled) would have to see this PSBT, so it is stored only while that revision holds.
          if (!(await repos.wallets.holdRevision(wallet.id, spending.revision))) return 'wallet_changed';
          // Counted under that hold: creations on the wallet, of any instance, take turns here.
          if ((await repos.psbts.countPending(wallet.id)) >= this.deps.maxPending) return 'too_many';
          // A replacement of the transaction a pending PSBT produced takes over that PSBT's coins.
          const events = [];
          if (takenOver && (await settle(repos, wallet.id, takenOver, 'broadcast', now))) events.push(newEvent('psbt.broadcast', wallet, now, { txid: takenOver, status: 'broadcast' }));
          await repos.psbts.insert(stored, plan.inputs);
          await writeLabels(repos);
          const record = this.recordOf(wallet, { ...stored, version: 0 });
          events.push(newEvent('psbt.created', wallet, now, { ...psbtFacts(txid, record, wallet.sigsRequired), created_by: principal.userName }));
          await repos.events.append(events);
          return 'stored';
        });
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
        const nowReserved = new Set((await this.deps.store.psbts.reservations(wallet.id)).map((r) => outpointKey(r.txid, r.vout)));
        if (!plan.inputs.some((o) => nowReserved.has(outpointKey(o.txid, o.vout)))) throw new ServiceError('conflict', 'psbt_exists', `PSBT ${txid} already exists`);
        // Another creation reserved one of these coins first: select again without it.
        if (request.inputs) throw new ServiceError('conflict', 'coins_reserved', 'The chosen coins were reserved by another PSBT; try again');
        outcome = 'coins_taken';
      }
      if (outcome === 'stored') return { txid, record: this.recordOf(wallet, { ...stored, version: 0 }) };
      if (outcome === 'too_many') {
        throw new ServiceError(
          'unprocessable',
          'too_many_pending_psbts',
          `The wallet holds ${this.deps.maxPending} pending PSBTs, the most allowed: delete one, or broadcast it, before creating another`,
        );
      }
      if (attempt >= MAX_CREATE_ATTEMPTS) {
        throw outcome === 'coins_taken'
          ? new ServiceError('conflict', 'coins_reserved', 'The chosen coins were reserved by another PSBT; try again')
          : new ServiceError('conflict', 'wallet_changed', 'The wallet kept changing while the PSBT was built; try again');
      }
    }
  }

  /**
   * What `create` would build now, stored nowhere and reserving nothing: the same checks, coin
   * selection and refusals, for a person to review before creating. Another creation or a sync may
   * change the outcome before the real one.
   */
  async preview(principal: Principal, alias: string, body: unknown): Promise<{ record: PsbtRecord; changeOutputs: number[] }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    const network = getNetwork(wallet.network);
    const request = parseCreateRequest(body as CreatePsbtInput, network);
    const { feeRate, incrementalRate } = await this.feeRates(request.feeRate);
    const spending = await this.deps.coins.forSpending(wallet.id);
    const { reserved } = await this.reservedCoins(wallet.id, spending, request.replaces);
    const plan = planPsbt(request, { spending, keys: this.keysOf(wallet), network, reserved, feeRate, incrementalRate, timelockWarningBlocks: this.deps.timelockWarningBlocks });
    const record = psbtRecord(plan.psbt, {
      network,
      changeOutputs: plan.changeOutputs,
      fullSizeVbytes: plan.fullSize,
      threshold: wallet.sigsRequired,
      time: this.now() / 1000,
      ...this.pathOptions(wallet, plan.psbt, plan.chosen?.index ?? 0),
    });
    return { record, changeOutputs: plan.changeOutputs };
  }

  /**
   * What a new PSBT can spend now, sats: the coins coin selection may take (not frozen, safe, mature) that no
   * pending PSBT holds. Sending exactly this with the fee taken from the recipient spends every one of them.
   */
  async spendable(principal: Principal, alias: string): Promise<bigint> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const spending = await this.deps.coins.forSpending(wallet.id);
    const { reserved } = await this.reservedCoins(wallet.id, spending, undefined);
    return spendableTotal(spending, reserved);
  }

  /** The payments and fee of an unconfirmed transaction of the wallet, to prefill its replacement. */
  async replacementDraft(principal: Principal, alias: string, txid: string): Promise<ReplacementDraft> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    return replacementDraft(await this.deps.coins.forSpending(wallet.id), txid.toLowerCase());
  }

  /** Fee rates (sat/kvB) the node estimates for confirmation within each target, null where it has none. */
  async feeEstimates(targets: readonly number[]): Promise<(bigint | null)[]> {
    const chain = this.requireChain();
    try {
      return await Promise.all(targets.map(async (t) => {
        const estimate = await chain.estimateFee(t);
        return estimate ? BigInt(estimate.satPerKvb) : null;
      }));
    } catch (error) {
      throw chainUnavailable(error);
    }
  }

  /**
   * Coins held by pending PSBTs. When `replaces` names a transaction that one of them produced (broadcast,
   * and seen by the wallet before the sync settled that PSBT), its coins are free for the replacement.
   */
  private async reservedCoins(walletId: string, spending: WalletForSpending, replaces: string | undefined): Promise<{ reserved: Set<string>; takenOver: string | undefined }> {
    const reservations = await this.deps.store.psbts.reservations(walletId);
    const original = replaces === undefined ? undefined : spending.transaction(replaces);
    const pending = original?.status === 'mempool' ? original : undefined;
    const producer = pending && unsignedTxid(hexOf(pending));
    const takenOver = producer !== undefined && reservations.some((r) => r.psbtTxid === producer) ? producer : undefined;
    return { reserved: new Set(reservations.filter((r) => r.psbtTxid !== takenOver).map((r) => outpointKey(r.txid, r.vout))), takenOver };
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

  /** The wallet's pending PSBTs, newest first. */
  async list(principal: Principal, alias: string): Promise<{ txid: string; record: PsbtRecord }[]> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const pending = await this.deps.store.psbts.list(wallet.id, 'pending');
    return pending.map((stored) => ({ txid: stored.txid, record: this.recordOf(wallet, stored) }));
  }

  private async findPending(wallet: StoredWallet, txid: string): Promise<StoredPsbt> {
    const id = txid.toLowerCase();
    if (!TXID.test(id)) throw psbtNotFound(txid);
    const found = await this.deps.store.psbts.find(wallet.id, id);
    if (found?.status !== 'pending') throw psbtNotFound(txid);
    return found;
  }

  /** A stored PSBT as version 0 (BIP174, as stored) or version 2 (BIP370): the same transaction and signatures. */
  async get(principal: Principal, alias: string, txid: string, psbtVersion: 0 | 2 = 0): Promise<{ record: PsbtRecord; psbt: Uint8Array; base64: string }> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const stored = await this.findPending(wallet, txid);
    const psbt = parsePsbt(stored.psbt);
    const record = this.recordOf(wallet, stored);
    if (psbtVersion === 2) {
      const v2 = serializePsbtV2(psbt);
      const v2Base64 = base64.encode(v2);
      return { record: { ...record, base64: v2Base64 }, psbt: v2, base64: v2Base64 };
    }
    return { record, psbt: serializePsbt(psbt), base64: stored.psbt };
  }

  /**
   * A stored PSBT whatever became of it (pending, broadcast or invalid), for pages that follow a payment
   * past its broadcast. `sentTxid`: the network txid of its transaction when it is finalized (or can be),
   * else null. The REST reads keep answering for pending PSBTs only.
   */
  async outcome(principal: Principal, alias: string, txid: string): Promise<PsbtOutcome> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const id = txid.toLowerCase();
    const stored = TXID.test(id) ? await this.deps.store.psbts.find(wallet.id, id) : undefined;
    if (!stored) throw psbtNotFound(txid);
    const parsed = parsePsbt(stored.psbt);
    const outputPlans = this.outputPlans(wallet, parsed);
    const finalized = finalizePsbt(parsed, outputPlans ? { outputPlans } : {});
    const sentTxid = finalized.complete ? transactionId(extractTransaction(finalized.psbt)) : null;
    // Reading a finalized input's signers verifies its signatures: a few inputs a turn (ADR 0010).
    const finalSigners = await runInParts(finalSignersInSteps(parsed), 16);
    return { status: stored.status, record: this.recordOf(wallet, stored), base64: stored.psbt, sentTxid, finalSigners };
  }

  /** Merges a cosigner's copy (base64 or binary) into the stored PSBT, again on the current version when another merge came first. */
  async update(principal: Principal, alias: string, txid: string, copy: string | Uint8Array): Promise<PsbtRecord> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend', 'psbt:sign');
    let incoming: Psbt;
    try {
      incoming = await runInParts(parsePsbtInSteps(typeof copy === 'string' ? copy.trim() : copy));
    } catch (error) {
      if (error instanceof CoreError) throw new ServiceError('invalid_input', 'invalid_psbt', `psbt: ${error.message}`, { errors: [{ path: '/psbt', message: error.message }] });
      throw error;
    }
    for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
      // A PSBT of a thousand inputs takes a good part of a second to parse, decode or write out:
      // each is done once, with a turn between them (ADR 0010).
      const stored = await this.findPending(wallet, txid);
      const storedPsbt = await runInParts(parsePsbtInSteps(stored.psbt));
      const merged = await mergeInto(storedPsbt, incoming, this.outputPlans(wallet, storedPsbt));
      const base64 = psbtToBase64(merged);
      if (base64 === stored.psbt) return this.recordInParts(wallet, stored, storedPsbt); // nothing new
      await nextTurn();
      const updatedAt = this.now();
      const before = await this.recordInParts(wallet, stored, storedPsbt);
      const after = await this.recordInParts(wallet, { ...stored, psbt: base64, updatedAt }, merged);
      await nextTurn();
      const finalSigners = { stored: await runInParts(finalSignersInSteps(storedPsbt), 16), merged: await runInParts(finalSignersInSteps(merged), 16) };
      const events = this.signingEvents(wallet, storedPsbt, merged, finalSigners, before, after, principal, updatedAt, stored.txid);
      const version = await this.deps.store.transaction(async (repos) => {
        const written = await repos.psbts.updatePsbt(wallet.id, stored.txid, base64, updatedAt, stored.version);
        if (written !== undefined) await repos.events.append(events);
        return written;
      });
      if (version !== undefined) return after;
    }
    throw psbtBusy(txid);
  }

  async delete(principal: Principal, alias: string, txid: string): Promise<void> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend');
    for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
      const stored = await this.findPending(wallet, txid);
      const at = this.now();
      const deleted = await this.deps.store.transaction(async (repos) => {
        if (!(await repos.psbts.delete(wallet.id, stored.txid, stored.version))) return false;
        await repos.events.append([newEvent('psbt.deleted', wallet, at, { txid: stored.txid, deleted_by: principal.userName })]);
        return true;
      });
      if (deleted) return;
    }
    throw psbtBusy(txid);
  }

  /** psbt.signed when the merge added signers' signatures, and psbt.ready when it reached the threshold. */
  private signingEvents(wallet: StoredWallet, stored: Psbt, merged: Psbt, finalSigners: { stored: string[][]; merged: string[][] }, before: PsbtRecord, after: PsbtRecord, principal: Principal, at: number, txid: string) {
    const earlier = new Set(signerFingerprints(stored, finalSigners.stored));
    const signers = signerFingerprints(merged, finalSigners.merged);
    const facts = psbtFacts(txid, after, wallet.sigsRequired);
    const events = [];
    if (after.sigs_count > before.sigs_count || signers.some((f) => !earlier.has(f))) {
      events.push(newEvent('psbt.signed', wallet, at, { ...facts, signed_by: signers.filter((f) => !earlier.has(f)), signers, updated_by: principal.userName }));
    }
    const required = after.sigs_required ?? wallet.sigsRequired;
    if (before.sigs_count < required && after.sigs_count >= required) events.push(newEvent('psbt.ready', wallet, at, { ...facts, signers }));
    return events;
  }

  /**
   * 422 `timelock_not_met` when the node would refuse the transaction for a lock its path waits for: a
   * coin's relative lock or the absolute one not reached by the next block (named by the height it is).
   */
  private async checkTimelocks(wallet: StoredWallet, stored: StoredPsbt, psbt: Psbt): Promise<void> {
    const keys = this.keysOf(wallet);
    if (!keys.miniscript) return;
    const chosen = choosePath(keys.miniscript.receive, pathId(stored.spendingPath ?? 0));
    if (chosen.path.sequence === undefined && chosen.path.lockTime === undefined) return;
    const spending = await this.deps.coins.forSpending(wallet.id);
    const coins = new Map(spending.utxos.map((u) => [outpointKey(u.txid, u.vout), u]));
    let latest: number | undefined;
    for (const input of psbt.tx.inputs) {
      const coin = coins.get(outpointKey(input.txid, input.vout));
      if (!coin) continue; // spent or unknown: the node answers for it
      if (lockReached(chosen, coin.blockHeight, spending.tipHeight)) continue;
      const from = spendableFrom(chosen, coin.blockHeight);
      if (from === undefined) throw timelockNotMet(chosen, undefined, `Coin ${input.txid}:${input.vout}`);
      if (latest === undefined || from > latest) latest = from;
    }
    if (latest !== undefined) throw timelockNotMet(chosen, latest, 'This transaction');
  }

  /** Finalizes, verifies every signature and broadcasts. The PSBT stays pending, as signed, until the sync sees its transaction. */
  async broadcast(principal: Principal, alias: string, txid: string): Promise<BroadcastResult> {
    const wallet = await this.deps.access.resolve(principal, alias, 'spend', 'psbt:broadcast');
    const chain = this.requireChain();
    // Finalized in memory only: the stored PSBT keeps the signatures as collected (who signed stays
    // readable), and nothing changes under open pages while the node answers. The sync settles it.
    const stored = await this.findPending(wallet, txid);
    const parsed = parsePsbt(stored.psbt);
    const outputPlans = this.outputPlans(wallet, parsed);
    const finalized = finalizePsbt(parsed, outputPlans ? { outputPlans } : {});
    if (!finalized.complete) {
      const reasons = finalized.pending.map((p) => `input ${p.input}: ${p.reason}`).join('; ');
      throw new ServiceError('unprocessable', 'not_enough_signatures', `The PSBT cannot be finalized yet (${reasons})`);
    }
    if (outputPlans) await this.checkTimelocks(wallet, stored, parsed);
    let hex: string;
    try {
      // A miniscript input's scripts are not ones the verifier interprets: finalization checked its ECDSA signatures, the node checks the rest.
      hex = toHex(serializeTransaction(outputPlans ? extractTransaction(finalized.psbt) : extractVerifiedTransaction(finalized.psbt)));
    } catch (error) {
      if (error instanceof CoreError) throw new ServiceError('unprocessable', 'invalid_signature', error.message);
      throw error;
    }
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
}

/** Signatures verified between two turns: about a millisecond each. */

const SIGNATURES_PER_TURN = 16;
/** The longest stretch of checks between two turns: a signature costs several times more on a loaded machine. */
const CHECKING_MS_PER_TURN = 10;

/**
 * The stored PSBT with a cosigner's copy merged in: 409 for another transaction, 422 for a bad signature.
 * The copy is checked input by input, giving way to other requests every few signatures (ADR 0010).
 */
async function mergeInto(stored: Psbt, incoming: Psbt, outputPlans?: readonly (OutputSpendPlan | undefined)[]): Promise<Psbt> {
  try {
    const merge = startCosignerMerge(stored, incoming, outputPlans);
    let sinceTurn = 0;
    let turnedAt = performance.now();
    for (let index = 0; index < merge.merged.inputs.length; index++) {
      sinceTurn += merge.checkInput(index);
      if (sinceTurn >= SIGNATURES_PER_TURN || (sinceTurn > 0 && performance.now() - turnedAt >= CHECKING_MS_PER_TURN)) {
        sinceTurn = 0;
        await nextTurn();
        turnedAt = performance.now();
      }
    }
    return merge.merged;
  } catch (error) {
    if (error instanceof PsbtError && error.code === 'different_transaction') {
      throw new ServiceError('conflict', 'different_transaction', 'The PSBT is not a copy of the same unsigned transaction');
    }
    if (error instanceof CoreError) throw new ServiceError('unprocessable', 'invalid_signature', error.message);
    throw error;
  }
}
