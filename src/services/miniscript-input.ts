/**
 * A miniscript wallet's keys from the create request: a miniscript descriptor (multipath, or a
 * receive/change pair), or a `paths` policy (a primary path and timelocked recoveries) compiled to
 * wsh or tr. Problems throw CoreError (DescriptorError, MiniscriptError) naming them.
 */
import { CoreError } from '../core/errors.js';
import { DescriptorError, type AddressType, type DescriptorKeyInfo } from '../core/descriptor/index.js';
import { parseKeyExpression } from '../core/descriptor/key-expression.js';
import { compilePolicy, isUnspendableKey, miniscriptSpendPlan, parseMiniscriptDescriptor, type MiniscriptDescriptor, type PolicyPath } from '../core/miniscript/index.js';
import type { Network } from '../core/network.js';
import { miniscriptBranchText, miniscriptKeyInfo, withChecksum } from './miniscript-wallet.js';

export interface ResolvedMiniscriptKeys {
  receive: string;
  change: string;
  info: { addressType: AddressType; sigsRequired: number; sigsTotal: number; keys: DescriptorKeyInfo[] };
  /** Label per key of `info.keys` (from the policy), undefined where none was given. */
  labels: (string | undefined)[];
  /** `receive` and `change` as parsed here, when they were (their addresses are derived from them without parsing again). */
  parsed?: { receive: MiniscriptDescriptor; change: MiniscriptDescriptor };
}

const policyError = (message: string) => new DescriptorError('invalid_policy', message);

const ADDRESS_TYPES: Record<MiniscriptDescriptor['kind'], AddressType> = { wsh: 'bech32', 'sh-wsh': 'p2sh-segwit', tr: 'bech32m' };

/** Keys of the wallet (not BIP341's unspendable internal key) and the summary of a parsed receive descriptor. */
function summary(desc: MiniscriptDescriptor): ResolvedMiniscriptKeys['info'] {
  if (!desc.keys.every((k, i) => (k.kind === 'xpub' && k.wildcard) || isUnspendableKey(desc.keyTexts[i]!))) {
    throw new DescriptorError('not_ranged', 'Wallet descriptors must derive one address per index: every key needs /*');
  }
  const keys = miniscriptKeyInfo(desc).filter((_, i) => !isUnspendableKey(desc.keyTexts[i]!));
  const plan = miniscriptSpendPlan(desc);
  return { addressType: ADDRESS_TYPES[desc.kind], sigsRequired: plan.paths[0]!.signers.k, sigsTotal: keys.length, keys };
}

/** A multipath `<0;1>` miniscript descriptor into its receive and change branches. */
export function miniscriptFromDescriptor(text: string, network: Network): ResolvedMiniscriptKeys {
  const parsed = parseMiniscriptDescriptor(text, network);
  if (parsed.multipath !== 2) throw new DescriptorError('multipath', 'A wallet descriptor needs exactly one two-value multipath step such as /<0;1>/*');
  const receive = miniscriptBranchText(text, 0);
  const change = miniscriptBranchText(text, 1);
  const parsedReceive = parseMiniscriptDescriptor(receive, network);
  const info = summary(parsedReceive);
  return { receive, change, info, labels: [], parsed: { receive: parsedReceive, change: parseMiniscriptDescriptor(change, network) } };
}

/** The step before each `/*`, which differs between a receive and a change descriptor. */
const shapeOf = (text: string) => text.replace(/\/\d+\/\*/g, '/N/*');

export function miniscriptFromPair(receiveText: string, changeText: string, network: Network): ResolvedMiniscriptKeys {
  const receive = parseMiniscriptDescriptor(receiveText, network);
  const change = parseMiniscriptDescriptor(changeText, network);
  if (receive.multipath > 1 || change.multipath > 1) throw new DescriptorError('multipath', 'Give the multipath descriptor alone, as descriptor');
  const info = summary(receive);
  summary(change);
  const pair = { receive: withChecksum(receiveText), change: withChecksum(changeText) };
  if (shapeOf(pair.receive.split('#')[0]!) !== shapeOf(pair.change.split('#')[0]!)) {
    throw policyError('recv_descriptor and change_descriptor must have the same scripts and keys');
  }
  if (pair.receive === pair.change) throw policyError('recv_descriptor and change_descriptor must differ (e.g. /0/* and /1/*)');
  return { ...pair, info, labels: [], parsed: { receive, change } };
}

interface PathsPolicyInput {
  script?: unknown;
  paths?: unknown;
}

function accountKey(entry: unknown, where: string, network: Network, taproot: boolean): { text: string; label: string | undefined } {
  const given = typeof entry === 'string' ? entry : (entry as { key?: unknown } | null)?.key;
  const label = typeof entry === 'object' && entry !== null && typeof (entry as { label?: unknown }).label === 'string' ? ((entry as { label: string }).label) : undefined;
  if (typeof given !== 'string' || given.trim() === '') throw policyError(`${where}: expected "[fingerprint/path]xpub" text`);
  let key;
  try {
    key = parseKeyExpression(given.trim(), { network, compressedOnly: true, taproot });
  } catch (e) {
    if (e instanceof CoreError) throw new DescriptorError(e.code, `${where}: ${e.message}`);
    // A decoder's own error on text the key parser did not foresee still names the key, never a 500.
    throw policyError(`${where}: expected "[fingerprint/path]xpub" text`);
  }
  if (key.kind !== 'xpub') throw policyError(`${where}: an extended public key (xpub) is required`);
  if (!key.origin) throw policyError(`${where}: the key origin [fingerprint/path] is required so signers can find their key`);
  if (key.steps.length > 0 || key.wildcard) throw policyError(`${where}: give the account key without derivation steps; /<0;1>/* is added`);
  return { text: `${given.trim()}/<0;1>/*`, label };
}

const MAX_POLICY_PATHS = 8;

/** `{type: "paths", script, paths: [{threshold, keys, after_blocks | after_height}]}` compiled to a descriptor. */
export function miniscriptFromPolicy(input: PathsPolicyInput, network: Network): ResolvedMiniscriptKeys {
  if (input.script !== 'wsh' && input.script !== 'tr') throw policyError('script must be "wsh" or "tr"');
  if (!Array.isArray(input.paths) || input.paths.length === 0) throw policyError('paths must be a non-empty list of {threshold, keys}');
  if (input.paths.length > MAX_POLICY_PATHS) throw policyError(`A policy has at most ${MAX_POLICY_PATHS} paths`);
  const labels = new Map<string, string | undefined>();
  const paths: PolicyPath[] = input.paths.map((raw: unknown, p) => {
    const path = raw as { threshold?: unknown; keys?: unknown; after_blocks?: unknown; after_height?: unknown } | null;
    if (typeof path !== 'object' || path === null || !Array.isArray(path.keys) || path.keys.length === 0) {
      throw policyError(`Path ${p + 1} must be {threshold, keys: [{key, label}]}`);
    }
    const keys = path.keys.map((k: unknown, i) => {
      const { text, label } = accountKey(k, `Path ${p + 1}, key ${i + 1}`, network, input.script === 'tr');
      if (!labels.has(text) || label !== undefined) labels.set(text, label ?? labels.get(text));
      return text;
    });
    const threshold = path.threshold ?? (keys.length === 1 ? 1 : undefined);
    if (typeof threshold !== 'number' || !Number.isInteger(threshold)) throw policyError(`Path ${p + 1}: threshold must be an integer`);
    if (path.after_blocks !== undefined && path.after_height !== undefined) throw policyError(`Path ${p + 1} has both after_blocks and after_height`);
    const lock = (value: unknown, name: string) => {
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'number' || !Number.isInteger(value)) throw policyError(`Path ${p + 1}: ${name} must be an integer`);
      return value;
    };
    const older = lock(path.after_blocks, 'after_blocks');
    const after = lock(path.after_height, 'after_height');
    return { threshold, keys, ...(older !== undefined && { older }), ...(after !== undefined && { after }) };
  });
  const compiled = compilePolicy({ script: input.script, paths });
  const resolved = miniscriptFromDescriptor(compiled.descriptor, network);
  const receive = parseMiniscriptDescriptor(resolved.receive, network);
  // Labels in the order of the wallet's keys (the descriptor's, without an unspendable internal key).
  const keyLabels = receive.keyTexts.filter((t) => !isUnspendableKey(t)).map((t) => labels.get(t.replace(/\/0\/\*$/, '/<0;1>/*')));
  return { ...resolved, labels: keyLabels };
}
