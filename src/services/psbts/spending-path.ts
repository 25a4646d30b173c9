/**
 * Spending by one path of a miniscript wallet: which path a request names, which coins that path can
 * spend at the tip (its timelock reached), and the PSBT fields an input or change output needs for it
 * (the witness script or the taproot leaf, and the derivations of the keys that sign on it).
 */
import { concatBytes, equalBytes, toHex } from '../../core/bytes.js';
import { spentOutput, type BuildInput, type KeyDerivation, type Psbt, type TaprootKeyInfo } from '../../core/psbt/index.js';
import type { KeyValue } from '../../core/psbt/types.js';
import type { OutputSpendPlan, SpendPath, SpendPlan } from '../../core/spend-plan.js';
import { isUnspendableKey } from '../../core/miniscript/index.js';
import { invalidField, ServiceError } from '../errors.js';
import { keysOfSigners, pathId, pathIndexOf, spendableFromHeight, timelockOf, type MiniscriptDeriver, type MiniscriptDerivedOutput } from '../miniscript-wallet.js';

const PSBT_IN_TAP_LEAF_SCRIPT = 0x15;
const TAPSCRIPT_LEAF_VERSION = 0xc0;

/** The path a PSBT spends by: its index in the wallet's plan, and a plan of that path alone (sizes and locks). */
export interface ChosenPath {
  index: number;
  id: string;
  path: SpendPath;
  plan: SpendPlan;
}

const singlePathPlans = new WeakMap<MiniscriptDeriver, SpendPlan[]>();

/** A plan of the one path (kept per deriver and path: coin selection compares plans by identity). */
function planOfPath(deriver: MiniscriptDeriver, index: number): SpendPlan {
  let plans = singlePathPlans.get(deriver);
  if (!plans) singlePathPlans.set(deriver, (plans = deriver.plan.paths.map((path) => ({ ...deriver.plan, paths: [path] }))));
  return plans[index]!;
}

export function choosePath(deriver: MiniscriptDeriver, id: string | undefined): ChosenPath {
  const index = id === undefined ? 0 : pathIndexOf(id, deriver.plan);
  if (index === undefined) {
    const known = deriver.plan.paths.map((_, i) => pathId(i)).join(', ');
    throw invalidField('/spending_path', `is not a spending path of this wallet (${known})`);
  }
  return { index, id: pathId(index), path: deriver.plan.paths[index]!, plan: planOfPath(deriver, index) };
}

/** The first height a coin (mined at `blockHeight`, null: unconfirmed) can be spent in by the path, or undefined when not known in heights. */
export const spendableFrom = (chosen: ChosenPath, blockHeight: number | null): number | undefined => spendableFromHeight(chosen.path, blockHeight);

/** True when a transaction spending the coin by the path can enter the next block. */
export function lockReached(chosen: ChosenPath, blockHeight: number | null, tipHeight: number): boolean {
  if (timelockOf(chosen.path) === null) return true;
  const from = spendableFrom(chosen, blockHeight);
  return from !== undefined && from <= tipHeight + 1;
}

/** 422 `timelock_not_met` naming the height the path can spend from (or why it has none yet). */
export function timelockNotMet(chosen: ChosenPath, from: number | undefined, what: string): ServiceError {
  const when = from !== undefined ? `from height ${from}` : timelockOf(chosen.path)?.type.startsWith('relative') ? 'once the coin is confirmed and its lock has passed' : 'once its lock in time has passed';
  return new ServiceError('unprocessable', 'timelock_not_met', `${what} can be spent on the ${chosen.id} path only ${when}`, {
    ...(from !== undefined && { errors: [{ path: '/spending_path', message: `spendable from height ${from}` }] }),
  });
}

const fingerprintBytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

function derivationOf(output: MiniscriptDerivedOutput, key: number): KeyDerivation {
  const k = output.keys[key]!;
  return { pubkey: k.publicKey, fingerprint: fingerprintBytes(k.fingerprint), path: [...k.path] };
}

/**
 * The PSBT fields of an output of the wallet: its scripts and every key's derivation (signers recognise
 * change as the wallet's). Taproot: each key's leaf hashes and, for an input, the leaf scripts
 * (PSBT_IN_TAP_LEAF_SCRIPT).
 */
export function miniscriptDetails(deriver: MiniscriptDeriver, output: MiniscriptDerivedOutput, chosen: ChosenPath | undefined): Pick<BuildInput, 'redeemScript' | 'witnessScript' | 'derivations' | 'taproot' | 'plan' | 'other'> {
  const plan: OutputSpendPlan = deriver.outputPlan(output);
  const desc = deriver.descriptor;
  // Every path's keys and leaves, not the chosen path's alone: a finalizer (Core's) needs every key a script
  // names by its hash, even on a branch not taken; `chosen` only says the PSBT carries leaf scripts.
  const paths = plan.paths;
  const signing = [...new Set(paths.flatMap((p) => keysOfSigners(p.signers)))].filter((k) => !isUnspendableKey(desc.keyTexts[k]!));
  const tr = output.miniscript.taproot;
  if (!tr) {
    return {
      ...(output.redeemScript && { redeemScript: output.redeemScript }),
      ...(output.witnessScript && { witnessScript: output.witnessScript }),
      derivations: signing.map((k) => derivationOf(output, k)),
      plan,
    };
  }
  const leafHashesOf = (key: number) => {
    const hashes = new Map<string, Uint8Array>();
    for (const p of paths) if (p.tapLeafHash && keysOfSigners(p.signers).includes(key)) hashes.set(toHex(p.tapLeafHash), p.tapLeafHash);
    return [...hashes.values()];
  };
  const taproot: TaprootKeyInfo = {
    internalKey: tr.internalKey,
    derivations: signing.map((k) => ({ ...derivationOf(output, k), leafHashes: leafHashesOf(k) })),
  };
  const other: KeyValue[] = [];
  for (const p of paths) {
    if (!p.tapLeafHash) continue;
    const leaf = tr.leafHashes.findIndex((h) => toHex(h) === toHex(p.tapLeafHash!));
    other.push({ key: concatBytes(Uint8Array.of(PSBT_IN_TAP_LEAF_SCRIPT), tr.controlBlocks[leaf]!), value: concatBytes(tr.leafScripts[leaf]!, Uint8Array.of(TAPSCRIPT_LEAF_VERSION)) });
  }
  return { taproot, plan, ...(chosen && other.length > 0 && { other }) };
}

/**
 * The plans of a PSBT's inputs that are the wallet's outputs, found by the derivation they carry (branch and
 * index, the last two steps) and checked against the output they spend. `only`: keep that path alone (signatures
 * counted toward it); otherwise every path, the first satisfiable one finalizing.
 */
export function outputPlansOf(psbt: Psbt, derivers: { receive: MiniscriptDeriver; change: MiniscriptDeriver }, only?: number): (OutputSpendPlan | undefined)[] {
  return psbt.inputs.map((input, index) => {
    const utxo = spentOutput(psbt, index);
    if (!utxo) return undefined;
    const origins = [...input.bip32Derivations, ...input.tapBip32Derivations];
    for (const origin of origins) {
      const [branch, child] = origin.path.slice(-2);
      if ((branch !== 0 && branch !== 1) || child === undefined || child >= 2 ** 31) continue;
      const deriver = branch === 0 ? derivers.receive : derivers.change;
      const output = deriver.derive(child);
      if (!equalBytes(output.scriptPubKey, utxo.script)) continue;
      const plan = deriver.outputPlan(output);
      return only === undefined ? plan : { ...plan, paths: [plan.paths[only]!] };
    }
    return undefined;
  });
}
