/**
 * Building a wallet's PSBT from its coins: coin selection (confirmed coins first), change to the
 * next unused change address, BIP125 replacements, and every field hardware wallets need.
 * Pure: the caller passes the wallet state, the reserved coins and the fee rate.
 */
import { bytesOfBinary, fromHex, toHex } from '../../core/bytes.js';
import { hexOf } from '../../engine/index.js';
import {
  CoinSelectionError,
  InsufficientFundsError,
  selectCoins,
  type Coin,
  type FeeRate,
  type SelectionResult,
} from '../../core/coinselect/index.js';
import { describeDescriptor, type Descriptor, type DerivedOutput } from '../../core/descriptor/index.js';
import { parsePath } from '../../core/keys/index.js';
import type { Network } from '../../core/network.js';
import { buildPsbt, type BuildInput, type BuildOutput, type KeyDerivation, type Psbt, type TaprootKeyInfo } from '../../core/psbt/index.js';
import { spendPlanOf } from '../../core/script-kinds/index.js';
import { pathTimelocks, type SpendPlan } from '../../core/spend-plan.js';
import { parseTransaction } from '../../core/tx.js';
import { ServiceError } from '../errors.js';
import type { SpendableUtxo, WalletForSpending } from '../wallets/spending.js';
import { branchDeriver, DEFAULT_TIMELOCK_WARNING_BLOCKS, MiniscriptDeriver, miniscriptKeyInfo, spendableFromHeight, type BranchDeriver, type MiniscriptDerivedOutput } from '../miniscript-wallet.js';
import { choosePath, lockReached, miniscriptDetails, spendableFrom, timelockNotMet, type ChosenPath } from './spending-path.js';
import { invalidField } from '../errors.js';
import { isUnspendableKey } from '../../core/miniscript/index.js';
import { SEQUENCE_FINAL_LOCKTIME, SEQUENCE_RBF, type ParsedCreateRequest } from './request.js';

/** Coinbase outputs become spendable after 100 confirmations. */
const COINBASE_MATURITY = 100;

export interface WalletKeys {
  receive: BranchDeriver;
  change: BranchDeriver;
  /** The fixed shapes' receive descriptor; undefined for a miniscript wallet. */
  descriptor: Descriptor | undefined;
  /** A miniscript wallet's derivers. */
  miniscript?: { receive: MiniscriptDeriver; change: MiniscriptDeriver };
}

export function walletKeys(receiveDescriptor: string, changeDescriptor: string, network: Network): WalletKeys {
  const receive = branchDeriver(receiveDescriptor, network);
  const change = branchDeriver(changeDescriptor, network);
  if (receive instanceof MiniscriptDeriver && change instanceof MiniscriptDeriver) return { receive, change, descriptor: undefined, miniscript: { receive, change } };
  if (receive instanceof MiniscriptDeriver || change instanceof MiniscriptDeriver) throw new Error('A wallet\'s receive and change descriptors are of one kind');
  return { receive, change, descriptor: receive.descriptor };
}

/** The path a request spends by: a miniscript wallet's chosen path, or undefined (the fixed shapes have one). */
export function requestedPath(keys: WalletKeys, id: string | undefined): ChosenPath | undefined {
  if (keys.miniscript) return choosePath(keys.miniscript.receive, id);
  if (id !== undefined && id !== 'primary') throw invalidField('/spending_path', 'is not a spending path of this wallet (primary)');
  return undefined;
}

export interface PlanContext {
  spending: WalletForSpending;
  keys: WalletKeys;
  network: Network;
  /** `txid:vout` of coins held by pending PSBTs. */
  reserved: ReadonlySet<string>;
  /** sat/kvB, already checked against the bounds. */
  feeRate: FeeRate;
  /** Incremental relay fee, sat/kvB (BIP125 replacements). */
  incrementalRate: FeeRate;
  /** Miniscript wallets: a refresh spends the coins whose recovery opens within this many blocks. */
  timelockWarningBlocks?: number;
}

export interface PsbtPlan {
  psbt: Psbt;
  changeOutputs: number[];
  fullSize: number;
  /** Outpoints spent, to reserve. */
  inputs: { txid: string; vout: number }[];
  selection: SelectionResult;
  /** Miniscript wallets: the path spent by. */
  chosen?: ChosenPath;
}

interface CandidateCoin {
  coin: Coin;
  txid: string;
  vout: number;
  value: bigint;
  /** scriptPubKey, hex (decoded only for the coins chosen). */
  script: string;
  branch: 0 | 1;
  index: number;
  prevTxHex: string;
}

const key = (txid: string, vout: number) => `${txid}:${vout}`;
const unprocessable = (code: string, message: string) => new ServiceError('unprocessable', code, message);

function fingerprintBytes(hex: string): Uint8Array {
  return fromHex(hex);
}

function inputDetails(derived: DerivedOutput, keys?: WalletKeys, chosen?: ChosenPath): Pick<BuildInput, 'redeemScript' | 'witnessScript' | 'derivations' | 'taproot' | 'plan' | 'other'> {
  if (keys?.miniscript) return miniscriptDetails(keys.miniscript.receive, derived as MiniscriptDerivedOutput, chosen);
  if (derived.taproot) {
    const taproot: TaprootKeyInfo = {
      internalKey: derived.taproot.internalKey,
      derivations: derived.keys.map((k) => ({ pubkey: k.publicKey, fingerprint: fingerprintBytes(k.fingerprint), path: [...k.path] })),
    };
    return { taproot };
  }
  const derivations: KeyDerivation[] = derived.keys.map((k) => ({ pubkey: k.publicKey, fingerprint: fingerprintBytes(k.fingerprint), path: [...k.path] }));
  return {
    ...(derived.redeemScript ? { redeemScript: derived.redeemScript } : {}),
    ...(derived.witnessScript ? { witnessScript: derived.witnessScript } : {}),
    derivations,
  };
}

/** Finds which of the wallet's derived scripts a script is (replacements spend coins no longer listed as unspent). */
function locateScript(keys: WalletKeys, scriptHex: string, limit: number): { branch: 0 | 1; index: number } | undefined {
  for (const [branch, deriver] of [[0, keys.receive], [1, keys.change]] as const) {
    for (let from = 0; from < limit; from += 100) {
      const found = deriver.deriveRange(from, 100).find((d) => toHex(d.scriptPubKey) === scriptHex);
      if (found) return { branch, index: found.index };
    }
  }
  return undefined;
}


/** The coins of a replaced transaction, and its fee and size, checked against the replacement rules' preconditions. */
function replacedTransaction(context: PlanContext, txid: string, inputType: SpendPlan): { coins: CandidateCoin[]; fee: bigint; vsize: number } {
  const { spending, keys } = context;
  const original = spending.transaction(txid);
  if (!original) throw new ServiceError('not_found', 'transaction_not_found', `Transaction ${txid} is not a transaction of this wallet`);
  if (original.status === 'confirmed') throw unprocessable('transaction_confirmed', `Transaction ${txid} is already confirmed and cannot be replaced`);
  if (original.status !== 'mempool') throw unprocessable('transaction_not_pending', `Transaction ${txid} is no longer in the mempool`);
  if (original.feeSat === null) throw unprocessable('cannot_replace', `Transaction ${txid} spends coins of others; this wallet cannot replace it`);
  const tx = parseTransaction(bytesOfBinary(original.raw));
  let maxIndex = spending.nextChangeIndex;
  for (const u of spending.utxos) if (u.index > maxIndex) maxIndex = u.index; // no spread: a wallet may hold 100,000 coins
  maxIndex += 1000;
  const coins = tx.inputs.map((input) => {
    const prev = spending.transaction(input.txid);
    const output = prev ? parseTransaction(bytesOfBinary(prev.raw)).outputs[input.vout] : undefined;
    const place = output && locateScript(keys, toHex(output.script), maxIndex);
    if (!prev || !output || !place) throw unprocessable('cannot_replace', `Transaction ${txid} spends a coin this wallet cannot sign for`);
    return {
      coin: { id: key(input.txid, input.vout), value: output.value, inputType, confirmed: prev.confirmations > 0 },
      txid: input.txid,
      vout: input.vout,
      value: output.value,
      script: toHex(output.script),
      branch: place.branch,
      index: place.index,
      prevTxHex: hexOf(prev),
    };
  });
  return { coins, fee: original.feeSat, vsize: original.vsize };
}

/** Not frozen, safe (confirmed or own unconfirmed change), and not an immature coinbase at the tip. */
const selectable = (u: SpendableUtxo, tipHeight: number): boolean =>
  !u.frozen && u.safe && (!u.coinbase || (u.blockHeight !== null && tipHeight - u.blockHeight + 1 >= COINBASE_MATURITY));

/** Sum of the coins coin selection may take now (selectable and not held by a pending PSBT), sats. */
export function spendableTotal(spending: WalletForSpending, reserved: ReadonlySet<string>): bigint {
  let total = 0n;
  for (const u of spending.utxos) if (selectable(u, spending.tipHeight) && !reserved.has(key(u.txid, u.vout))) total += u.valueSat;
  return total;
}

interface SharedPool {
  inputType: SpendPlan;
  /** The tip the coinbase coins' maturity was judged at. */
  tipHeight: number;
  candidates: readonly CandidateCoin[];
  /** The candidates' coins: one frozen list, so that coin selection reuses its preparation. */
  coins: readonly Coin[];
}

const sharedPools = new WeakMap<readonly SpendableUtxo[], SharedPool>();

/**
 * The selectable coins of a frozen coin list (a revision's list as forSpending shares it, per set of frozen
 * coins), built once per list, input type and tip; undefined for any other list.
 */
function sharedPool(utxos: readonly SpendableUtxo[], inputType: SpendPlan, tipHeight: number): SharedPool | undefined {
  if (!Object.isFrozen(utxos)) return undefined;
  const known = sharedPools.get(utxos);
  if (known && sameInputType(known.inputType, inputType) && known.tipHeight === tipHeight) return known;
  const candidates: CandidateCoin[] = [];
  for (const u of utxos) {
    if (!selectable(u, tipHeight)) continue;
    const candidate = candidateOf(u, inputType);
    if (!Object.isFrozen(candidate.coin)) return undefined;
    candidates.push(candidate);
  }
  const made = { inputType, tipHeight, candidates: Object.freeze(candidates), coins: Object.freeze(candidates.map((c) => c.coin)) };
  sharedPools.set(utxos, made);
  return made;
}

/**
 * Candidates per coin record: a wallet's coin records are shared by every creation on one revision and kept
 * across revisions while unchanged, so a wallet of 100,000 coins builds their candidates once, not on every
 * request or block.
 */
const candidateCache = new WeakMap<SpendableUtxo, CandidateCoin>();
/** The same candidates by their coin, to go back from coin selection's choice without a pass over every candidate. */
const candidateOfCoin = new WeakMap<Coin, CandidateCoin>();

function candidateOf(u: SpendableUtxo, inputType: SpendPlan): CandidateCoin {
  const cached = candidateCache.get(u);
  if (cached && sameInputType(cached.coin.inputType as SpendPlan | undefined, inputType)) return cached;
  const made = newCandidate(u, inputType);
  if (Object.isFrozen(u)) {
    // A frozen record cannot change under its candidate; frozen too, since later requests share it.
    Object.freeze(made.coin);
    candidateCache.set(u, Object.freeze(made));
    candidateOfCoin.set(made.coin, made);
  }
  return made;
}

/** Plans of script kinds are shared objects: the same plan is the same object. */
const sameInputType = (a: SpendPlan | undefined, b: SpendPlan): boolean => a === b;

function newCandidate(u: SpendableUtxo, inputType: SpendPlan): CandidateCoin {
  return {
    coin: { id: key(u.txid, u.vout), value: u.valueSat, inputType, confirmed: u.blockHeight !== null, isOwnChange: u.branch === 1 },
    txid: u.txid,
    vout: u.vout,
    value: u.valueSat,
    script: u.script,
    branch: u.branch,
    index: u.index,
    prevTxHex: u.prevTxHex,
  };
}

function selectionError(error: unknown): never {
  if (error instanceof InsufficientFundsError) {
    throw unprocessable('insufficient_funds', `Insufficient funds: ${error.missing} sat more needed, including the fee`);
  }
  if (error instanceof CoinSelectionError) {
    if (error.code === 'amount_below_dust') throw unprocessable('amount_below_dust', error.message);
    if (error.code === 'max_weight_exceeded') throw unprocessable('transaction_too_large', error.message);
    throw unprocessable('invalid_selection', error.message);
  }
  throw error;
}

/**
 * A refresh as a payment: every coin whose first recovery path opens within the warning window (not frozen, not
 * held by a pending PSBT) spent by the primary path to the next change address, the fee taken from it.
 */
function refreshRequest(request: ParsedCreateRequest, context: PlanContext): ParsedCreateRequest {
  const { spending, keys, reserved } = context;
  if (!keys.miniscript) throw unprocessable('nothing_to_refresh', 'Only a miniscript wallet has timelocked paths to refresh');
  const { plan } = keys.miniscript.receive;
  const window = context.timelockWarningBlocks ?? DEFAULT_TIMELOCK_WARNING_BLOCKS;
  const coins = spending.utxos.filter((u) => {
    if (!selectable(u, spending.tipHeight) || reserved.has(key(u.txid, u.vout))) return false;
    return plan.paths.slice(1).some((path) => {
      const from = spendableFromHeight(path, u.blockHeight);
      return from !== undefined && from - (spending.tipHeight + 1) <= window;
    });
  });
  if (coins.length === 0) throw unprocessable('nothing_to_refresh', `No coin's recovery path opens within ${window} blocks`);
  const target = keys.change.derive(spending.nextChangeIndex);
  const value = coins.reduce((sum, u) => sum + u.valueSat, 0n);
  return {
    ...request,
    recipients: [{ address: target.address, script: target.scriptPubKey, value, label: undefined }],
    subtractFrom: 0,
    inputs: coins.map((u) => ({ txid: u.txid, vout: u.vout })),
  };
}

/** Builds the PSBT of a checked request. Throws ServiceError for what the wallet cannot do. */
export function planPsbt(asked: ParsedCreateRequest, context: PlanContext): PsbtPlan {
  const { spending, keys, reserved } = context;
  const request = asked.refresh ? refreshRequest(asked, context) : asked;
  const chosen = requestedPath(keys, request.spendingPath);
  const inputType = chosen ? chosen.plan : spendPlanOf(keys.descriptor!);
  // A timelocked path spends only the coins whose lock the next block reaches.
  const locked = chosen !== undefined && chosen.index > 0 && (chosen.path.sequence !== undefined || chosen.path.lockTime !== undefined);
  const reachable = (u: SpendableUtxo) => !locked || lockReached(chosen, u.blockHeight, spending.tipHeight);
  let earliest: number | undefined;
  let lockedOut = 0;

  let replaced: ReturnType<typeof replacedTransaction> | undefined;
  if (request.replaces) {
    replaced = replacedTransaction(context, request.replaces, inputType);
    // BIP125 rule 6 (Core): the new rate must beat the original's by the incremental relay fee.
    const originalRate = (replaced.fee * 1000n + BigInt(replaced.vsize) - 1n) / BigInt(replaced.vsize);
    if (context.feeRate < originalRate + context.incrementalRate) {
      throw unprocessable(
        'fee_rate_too_low_for_replacement',
        `A replacement of ${request.replaces} needs a fee rate of at least ${Number(originalRate + context.incrementalRate) / 1000} sat/vB`,
      );
    }
  }
  const replacedId = request.replaces;
  for (const coin of replaced?.coins ?? []) {
    if (reserved.has(coin.coin.id)) {
      throw unprocessable('input_reserved', `Coin ${coin.coin.id} of the replaced transaction is held by another pending PSBT`);
    }
  }

  let candidates: CandidateCoin[];
  let pool: SharedPool | undefined;
  if (request.inputs) {
    const utxoByKey = new Map(spending.utxos.map((u) => [key(u.txid, u.vout), u]));
    candidates = request.inputs.map(({ txid, vout }) => {
      const id = key(txid, vout);
      const utxo = utxoByKey.get(id);
      if (!utxo) throw unprocessable('unknown_input', `Coin ${id} is not an unspent coin of this wallet`);
      if (utxo.frozen) throw unprocessable('input_frozen', `Coin ${id} is frozen`);
      if (reserved.has(id)) throw unprocessable('input_reserved', `Coin ${id} is held by another pending PSBT`);
      if (!reachable(utxo)) throw timelockNotMet(chosen!, spendableFrom(chosen!, utxo.blockHeight), `Coin ${id}`);
      return candidateOf(utxo, inputType);
    });
  } else {
    const shared = replacedId === undefined && !locked ? sharedPool(spending.utxos, inputType, spending.tipHeight) : undefined;
    if (shared) {
      // The revision's pool, the same list for every creation: reserved coins are excluded by id.
      pool = shared;
      candidates = shared.candidates as CandidateCoin[];
    } else {
      // One pass over the coins (a wallet may hold 100,000 of them).
      const anyReserved = reserved.size > 0;
      candidates = [];
      for (const u of spending.utxos) {
        if (!selectable(u, spending.tipHeight) || u.txid === replacedId) continue;
        if (anyReserved && reserved.has(key(u.txid, u.vout))) continue;
        if (!reachable(u)) {
          const from = spendableFrom(chosen!, u.blockHeight);
          if (from !== undefined && (earliest === undefined || from < earliest)) earliest = from;
          lockedOut++;
          continue;
        }
        candidates.push(candidateOf(u, inputType));
      }
    }
  }
  if (locked && candidates.length === 0 && lockedOut > 0) throw timelockNotMet(chosen, earliest, 'No coin of the wallet');
  const replacedCoins = replaced?.coins ?? [];
  const all = replacedCoins.length > 0 ? [...replacedCoins, ...candidates] : candidates;

  // Change: the given address, or the next unused change address of the wallet. Either way it is the wallet's
  // own script, with the derivation data signers check it by: anything else pays someone, and is a recipient.
  let changeDerived: DerivedOutput;
  if (request.changeAddress) {
    const owner = spending.ownerOfScript(toHex(request.changeAddress.script));
    if (!owner) {
      const message = 'change_address is not an address of this wallet; to pay it, list it as a recipient';
      throw new ServiceError('unprocessable', 'change_address_not_owned', message, { errors: [{ path: '/change_address', message: 'is not an address of this wallet' }] });
    }
    changeDerived = (owner.branch === 0 ? keys.receive : keys.change).derive(owner.index);
  } else {
    changeDerived = keys.change.derive(spending.nextChangeIndex);
  }
  const changeScript = changeDerived.scriptPubKey;

  let selection: SelectionResult;
  try {
    // Coin selection takes confirmed coins first, then the wallet's own unconfirmed change, then its other safe
    // coins; the shared pool's reserved coins are excluded by id (the same as leaving them out).
    selection = selectCoins({
      coins: pool ? pool.coins : all.map((c) => c.coin),
      recipients: request.recipients.map((r) => ({ script: r.script, value: r.value })),
      changeScript,
      changeInputType: inputType,
      feeRate: context.feeRate,
      options: {
        ...(request.subtractFrom !== undefined ? { subtractFeeFrom: request.subtractFrom } : {}),
        ...(request.inputs ? { mustUse: all.map((c) => c.coin.id) } : replacedCoins.length ? { mustUse: replacedCoins.map((c) => c.coin.id) } : {}),
        ...(replaced ? { minimumFee: replaced.fee, minimumFeeIncrementalRate: context.incrementalRate } : {}),
        ...(pool ? { exclude: reserved } : {}),
      },
    });
  } catch (error) {
    selectionError(error);
  }

  // The wallet spends by its plan's first path (a miniscript wallet: the chosen one): its nSequence and nLockTime, if it needs any.
  const { sequence, lockTime } = pathTimelocks(inputType.paths[0]!, { sequence: request.rbf ? SEQUENCE_RBF : SEQUENCE_FINAL_LOCKTIME, lockTime: spending.tipHeight });
  // Back from the chosen coins to their candidates: kept ones by coin, the others (replaced coins) by a map built if needed.
  let others: Map<Coin, CandidateCoin> | undefined;
  const picked = selection.inputs.map((c) => candidateOfCoin.get(c) ?? (others ??= new Map(all.map((a) => [a.coin, a]))).get(c)!);
  const inputs: BuildInput[] = picked.map((c) => {
    const derived = (c.branch === 0 ? keys.receive : keys.change).derive(c.index);
    return {
      txid: c.txid,
      vout: c.vout,
      value: c.value,
      scriptPubKey: fromHex(c.script),
      ...(derived.taproot || (derived as MiniscriptDerivedOutput).miniscript?.taproot ? {} : { prevTx: c.prevTxHex }), // taproot signatures commit to every amount: no full transaction needed
      ...inputDetails(derived, keys, chosen),
    };
  });
  const outputs: BuildOutput[] = selection.recipients.map((r) => ({ script: r.script, value: r.value }));
  const changeOutputs: number[] = [];
  if (selection.change !== null) {
    changeOutputs.push(outputs.length);
    const { other: _, ...details } = inputDetails(changeDerived, keys);
    outputs.push({ script: changeScript, value: selection.change, change: details });
  }
  if (request.refresh) {
    // The one output pays the wallet's next change address: it is change, with its derivations.
    const { other: _, ...details } = inputDetails(changeDerived, keys);
    outputs[0] = { ...outputs[0]!, change: details };
    changeOutputs.push(0);
  }
  const infoKeys = keys.miniscript
    ? miniscriptKeyInfo(keys.miniscript.receive.descriptor).filter((_, i) => !isUnspendableKey(keys.miniscript!.receive.descriptor.keyTexts[i]!))
    : describeDescriptor(keys.descriptor!).keys;
  const globalXpubs =
    infoKeys.length > 1
      ? infoKeys.map((k) => ({ xpub: k.xpub, fingerprint: fromHex(k.fingerprint), path: parsePath(k.derivation) }))
      : undefined;
  const psbt = buildPsbt({
    inputs,
    outputs,
    version: 2,
    locktime: lockTime,
    sequence,
    ...(globalXpubs ? { globalXpubs } : {}),
  });
  return { psbt, changeOutputs, fullSize: selection.vsize, inputs: picked.map((c) => ({ txid: c.txid, vout: c.vout })), selection, ...(chosen && { chosen }) };
}
