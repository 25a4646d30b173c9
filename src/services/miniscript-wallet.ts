/**
 * Wallets whose descriptor is miniscript (wsh, sh(wsh()), tr with a script tree): reading their
 * descriptors, deriving their outputs like the fixed shapes' DescriptorDeriver, and naming their
 * spending paths (the primary one first, then the timelocked recoveries) as the REST contract shows them.
 */
import { fromHex, toHex } from '../core/bytes.js';
import { addChecksum, DescriptorDeriver, parseDescriptor, stripChecksum, type KeyExpression } from '../core/descriptor/index.js';
import { encodeExtendedPublicKey, keyFingerprint } from '../core/keys/extended-key.js';
import { formatPath } from '../core/keys/path.js';
import {
  deriveMiniscriptRange,
  miniscriptOutputPlan,
  miniscriptSpendPlan,
  parseMiniscriptDescriptor,
  type MiniscriptDescriptor,
  type MiniscriptOutput,
} from '../core/miniscript/index.js';
import type { DerivedKey, DerivedOutput } from '../core/descriptor/index.js';
import type { Network } from '../core/network.js';
import type { OutputSpendPlan, SignerThreshold, SpendPath, SpendPlan } from '../core/spend-plan.js';

/** A derived output of a miniscript wallet: what the fixed shapes give, and the miniscript output its plan is built from. */
export interface MiniscriptDerivedOutput extends DerivedOutput {
  readonly miniscript: MiniscriptOutput;
}

/** BIP68: bit 22 of nSequence makes a relative lock count 512-second units, not blocks. */
const SEQUENCE_TYPE_FLAG = 1 << 22;
const SEQUENCE_MASK = 0xffff;
const LOCKTIME_THRESHOLD = 500_000_000;

export type PathTimelock =
  | { type: 'relative_blocks'; blocks: number }
  | { type: 'relative_time'; seconds: number }
  | { type: 'absolute_height'; height: number }
  | { type: 'absolute_time'; time: number };

/** The timelock a path waits for, or null for a path without one. */
export function timelockOf(path: SpendPath): PathTimelock | null {
  if (path.sequence !== undefined) {
    const value = path.sequence & SEQUENCE_MASK;
    return path.sequence & SEQUENCE_TYPE_FLAG ? { type: 'relative_time', seconds: value * 512 } : { type: 'relative_blocks', blocks: value };
  }
  if (path.lockTime !== undefined) return path.lockTime < LOCKTIME_THRESHOLD ? { type: 'absolute_height', height: path.lockTime } : { type: 'absolute_time', time: path.lockTime };
  return null;
}

/**
 * The first block height at which a coin can be spent by a path: a relative lock counts from the
 * coin's block (an unconfirmed coin: undefined), an absolute height lock is final one block past it.
 * Locks in time are not counted in heights: undefined.
 */
export function spendableFromHeight(path: SpendPath, coinHeight: number | null): number | undefined {
  const lock = timelockOf(path);
  if (lock === null) return coinHeight === null ? undefined : coinHeight;
  if (lock.type === 'relative_blocks') return coinHeight === null ? undefined : coinHeight + lock.blocks;
  if (lock.type === 'absolute_height') return lock.height + 1;
  return undefined;
}

/** Path ids: the first path is `primary`, the others `recovery-1`, `recovery-2`... in the plan's order. */
export const pathId = (index: number): string => (index === 0 ? 'primary' : `recovery-${index}`);
export const pathIndexOf = (id: string, plan: SpendPlan): number | undefined => {
  if (id === 'primary') return 0;
  const match = /^recovery-([1-9]\d{0,2})$/.exec(id);
  const index = match ? Number(match[1]) : -1;
  return index > 0 && index < plan.paths.length ? index : undefined;
};

/** The keys a threshold names, each once, in order. */
export function keysOfSigners(signers: SignerThreshold): number[] {
  const out: number[] = [];
  const walk = (t: SignerThreshold) => t.of.forEach((p) => (typeof p === 'number' ? !out.includes(p) && out.push(p) : walk(p)));
  walk(signers);
  return out;
}


/** A multipath descriptor text's branch: each `<a;b>` step replaced by its value at `branch`, with a new checksum. */
export function miniscriptBranchText(text: string, branch: number): string {
  const { body } = stripChecksum(text.trim());
  return addChecksum(body.replace(/<([^;>]+(?:;[^;>]+)+)>/g, (_, values: string) => values.split(';')[branch]!));
}

export const withChecksum = (text: string): string => addChecksum(stripChecksum(text.trim()).body);

/** Master fingerprint, origin path and extended key of each key (a key without origin is its own master). */
export function miniscriptKeyInfo(desc: MiniscriptDescriptor): { fingerprint: string; derivation: string; xpub: string }[] {
  return desc.keys.map((key) => {
    const publicKey = key.kind === 'xpub' ? key.xpub.publicKey : key.publicKey.length === 32 ? Uint8Array.of(2, ...key.publicKey) : key.publicKey;
    return {
      fingerprint: key.origin?.fingerprint ?? keyFingerprint(publicKey),
      derivation: formatPath(key.origin?.path ?? []),
      xpub: key.kind === 'xpub' ? encodeExtendedPublicKey(key.xpub, desc.network) : toHex(key.publicKey),
    };
  });
}

function originOf(key: KeyExpression, index: number): { fingerprint: string; path: number[] } {
  if (key.kind === 'pubkey') {
    const publicKey = key.publicKey.length === 32 ? Uint8Array.of(2, ...key.publicKey) : key.publicKey;
    return { fingerprint: key.origin?.fingerprint ?? keyFingerprint(publicKey), path: [...(key.origin?.path ?? [])] };
  }
  const steps = key.steps.map((s) => s as number);
  return {
    fingerprint: key.origin?.fingerprint ?? keyFingerprint(key.xpub.publicKey),
    path: [...(key.origin?.path ?? []), ...steps, ...(key.wildcard ? [index] : [])],
  };
}

/** Derives a one-branch miniscript descriptor's outputs, as DescriptorDeriver derives the fixed shapes'. */
export class MiniscriptDeriver {
  readonly plan: SpendPlan;

  constructor(readonly descriptor: MiniscriptDescriptor) {
    this.plan = miniscriptSpendPlan(descriptor);
  }

  deriveRange(from: number, count: number): MiniscriptDerivedOutput[] {
    return deriveMiniscriptRange(this.descriptor, from, count).map((output) => {
      const keys: DerivedKey[] = this.descriptor.keys.map((key, k) => {
        const origin = originOf(key, output.index);
        return { publicKey: output.keys[k]!, fingerprint: origin.fingerprint, path: origin.path, pathText: formatPath(origin.path) };
      });
      return {
        index: output.index,
        scriptPubKey: output.scriptPubKey,
        address: output.address,
        ...(output.redeemScript && { redeemScript: output.redeemScript }),
        ...(output.witnessScript && { witnessScript: output.witnessScript }),
        keys,
        miniscript: output,
      };
    });
  }

  derive(index: number): MiniscriptDerivedOutput {
    return this.deriveRange(index, 1)[0]!;
  }

  addresses(from: number, count: number): string[] {
    return this.deriveRange(from, count).map((o) => o.address);
  }

  outputPlan(output: MiniscriptDerivedOutput): OutputSpendPlan {
    return miniscriptOutputPlan(this.descriptor, output.miniscript);
  }
}

/** Blocks before a coin's recovery path opens that it is flagged (about 30 days). */
export const DEFAULT_TIMELOCK_WARNING_BLOCKS = 4320;

export interface ExpiringCoin {
  txid: string;
  vout: number;
  /** The first recovery path to open for the coin, and the height it opens at. */
  spending_path: string;
  from_height: number;
}

/**
 * Coins whose earliest recovery path opens within `warningBlocks` of the next block (or has opened): spend them
 * back to the wallet (a refresh) to keep the primary path the only one that can spend them.
 */
export function expiringCoins(coins: readonly { txid: string; vout: number; spendable_from?: Record<string, number> }[], tipHeight: number, warningBlocks: number): ExpiringCoin[] {
  const out: ExpiringCoin[] = [];
  for (const coin of coins) {
    let first: [string, number] | undefined;
    for (const [id, height] of Object.entries(coin.spendable_from ?? {})) if (id !== 'primary' && (!first || height < first[1])) first = [id, height];
    if (first && first[1] - (tipHeight + 1) <= warningBlocks) out.push({ txid: coin.txid, vout: coin.vout, spending_path: first[0], from_height: first[1] });
  }
  return out;
}

export const fingerprintBytes = (hex: string): Uint8Array => fromHex(hex);

/** A wallet branch's deriver: the fixed shapes', or a miniscript descriptor's. */
export type BranchDeriver = DescriptorDeriver | MiniscriptDeriver;

export function branchDeriver(text: string, network: Network): BranchDeriver {
  return isMiniscriptText(text) ? new MiniscriptDeriver(parseMiniscriptDescriptor(text, network)) : new DescriptorDeriver(parseDescriptor(text, network));
}

/**
 * True for a stored descriptor the fixed shapes do not read: wsh() or sh(wsh()) around anything but
 * multi/sortedmulti, or tr() with a script tree. Decided on the text, so listing wallets parses nothing.
 */
export function isMiniscriptText(text: string): boolean {
  const body = text.trim();
  const inner = body.startsWith('sh(wsh(') ? body.slice(7) : body.startsWith('wsh(') ? body.slice(4) : undefined;
  if (inner !== undefined) return !/^(sorted)?multi\(/.test(inner);
  return body.startsWith('tr(') && body.includes(',');
}

export interface SpendingPathView {
  id: string;
  threshold: number;
  keys: { fingerprint: string; label: string }[];
  timelock: PathTimelock | null;
}

const pathViews = new WeakMap<MiniscriptDeriver, SpendingPathView[]>();

/** The wallet's spending paths as the wallet details show them; `labels` are the stored keys' labels. */
export function spendingPathViews(deriver: MiniscriptDeriver, stored: readonly { fingerprint: string; xpub: string; label: string }[]): SpendingPathView[] {
  let views = pathViews.get(deriver);
  if (!views) {
    const info = miniscriptKeyInfo(deriver.descriptor);
    views = deriver.plan.paths.map((path, i) => ({
      id: pathId(i),
      threshold: path.signers.k,
      keys: keysOfSigners(path.signers).map((k) => {
        const key = info[k]!;
        return { fingerprint: key.fingerprint, label: stored.find((s) => s.fingerprint === key.fingerprint && s.xpub === key.xpub)?.label ?? '' };
      }),
      timelock: timelockOf(path),
    }));
    pathViews.set(deriver, views);
  }
  return views;
}

/** From which block height each path can spend a coin mined at `coinHeight` (null: unconfirmed); a path not known in heights is left out. */
export function spendableFrom(deriver: MiniscriptDeriver, coinHeight: number | null): Record<string, number> {
  const out: Record<string, number> = {};
  deriver.plan.paths.forEach((path, i) => {
    const height = spendableFromHeight(path, coinHeight);
    if (height !== undefined) out[pathId(i)] = height;
  });
  return out;
}
