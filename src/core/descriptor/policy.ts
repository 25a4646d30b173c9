/**
 * Wallet-level views of descriptors: building the receive/change pair from a policy
 * (type, threshold, account keys), splitting a multipath `<0;1>` descriptor, and the summary the
 * wallet details show (address type, signatures, keys).
 */
import type { Network } from '../network.js';
import { encodeExtendedPublicKey, keyFingerprint } from '../keys/extended-key.js';
import { formatPath } from '../keys/path.js';
import { DescriptorError } from './errors.js';
import { DESCRIPTOR_TYPES, expandMultipath, formatDescriptor, isDescriptorType, multipathCount, parseDescriptor, type Descriptor, type DescriptorType } from './descriptor.js';
import { toHex } from '../bytes.js';
import { scriptKind, type AddressType } from '../script-kinds/index.js';
import { CoreError } from '../errors.js';
import { parseKeyExpression, type KeyExpression } from './key-expression.js';

export type { AddressType };

export interface WalletPolicy {
  readonly type: DescriptorType;
  /** Signatures required; for single-key types absent or 1. */
  readonly threshold?: number;
  /** Account keys as `[fingerprint/path]xpub` (any SLIP-132 form of the network). */
  readonly keys: readonly { readonly key: string }[];
}

export interface DescriptorPair {
  readonly receive: string;
  readonly change: string;
}

export interface DescriptorKeyInfo {
  /** Master fingerprint of the key origin (8 hex digits). */
  readonly fingerprint: string;
  /** Origin path, `m/48h/1h/0h/2h` (`m` without origin). */
  readonly derivation: string;
  /** The extended key as xpub/tpub (or the hex public key). */
  readonly xpub: string;
}

export interface DescriptorInfo {
  readonly type: DescriptorType;
  readonly addressType: AddressType;
  readonly sigsRequired: number;
  readonly sigsTotal: number;
  readonly keys: readonly DescriptorKeyInfo[];
}


function policyError(message: string): DescriptorError {
  return new DescriptorError('invalid_policy', message);
}

function parsePolicyKey(text: unknown, position: number, network: Network): KeyExpression {
  if (typeof text !== 'string' || text.length === 0) throw policyError(`Key ${position + 1}: expected "[fingerprint/path]xpub" text`);
  let key: KeyExpression;
  try {
    key = parseKeyExpression(text.trim(), { network, compressedOnly: true, taproot: false });
  } catch (e) {
    if (e instanceof CoreError) throw new DescriptorError(e.code, `Key ${position + 1}: ${e.message}`);
    throw e;
  }
  if (key.kind !== 'xpub') throw policyError(`Key ${position + 1}: an extended public key (xpub) is required`);
  if (!key.origin) throw policyError(`Key ${position + 1}: the key origin [fingerprint/path] is required so signers can find their key`);
  if (key.steps.length > 0 || key.wildcard) {
    throw policyError(`Key ${position + 1}: give the account key without derivation steps; /0/* and /1/* are added`);
  }
  return key;
}

/** The receive (`/0/*`) and change (`/1/*`) descriptors of a policy, canonical and with checksums. */
export function descriptorsFromPolicy(policy: WalletPolicy, network: Network): DescriptorPair {
  if (typeof policy !== 'object' || policy === null) throw policyError('Policy must be an object');
  if (!isDescriptorType(policy.type)) throw policyError(`Unknown policy type; expected one of ${DESCRIPTOR_TYPES.join(', ')}`);
  if (!Array.isArray(policy.keys) || policy.keys.length === 0) throw policyError('Policy needs at least one key');
  const kind = scriptKind(policy.type);
  const single = !kind.multisig;
  const threshold = policy.threshold ?? (single ? 1 : undefined);
  if (typeof threshold !== 'number' || !Number.isInteger(threshold)) throw policyError('Policy threshold must be an integer');
  if (single && (policy.keys.length !== 1 || threshold !== 1)) throw policyError(`A ${policy.type} policy has exactly one key and threshold 1`);
  const maxKeys = kind.maxKeys;
  if (policy.keys.length > maxKeys) throw policyError(`A ${policy.type} policy has at most ${maxKeys} keys`);
  if (threshold < 1 || threshold > policy.keys.length) throw policyError(`Threshold ${threshold} must be between 1 and ${policy.keys.length}`);
  const keys = policy.keys.map((k, i) => parsePolicyKey((k as { key?: unknown } | null)?.key, i, network));
  const xpubs = keys.map((k) => (k.kind === 'xpub' ? toHex(k.xpub.publicKey) : ''));
  if (new Set(xpubs).size !== xpubs.length) throw policyError('The same key appears twice');
  const branch = (index: number): string =>
    formatDescriptor({ type: policy.type, network, threshold, keys: keys.map((k) => ({ ...k, steps: [index], wildcard: true })) });
  return { receive: branch(0), change: branch(1) };
}

/** Receive and change descriptors of a two-branch multipath descriptor (`/<0;1>/*`). */
export function splitMultipath(descriptor: Descriptor): DescriptorPair {
  if (multipathCount(descriptor) !== 2) {
    throw new DescriptorError('multipath', 'A wallet descriptor needs exactly one two-value multipath step such as /<0;1>/*');
  }
  const [receive, change] = expandMultipath(descriptor).map(formatDescriptor);
  return { receive: receive!, change: change! };
}

/** Parses and splits a multipath descriptor text. */
export const splitMultipathText = (text: string, network: Network): DescriptorPair => splitMultipath(parseDescriptor(text, network));

export function describeDescriptor(descriptor: Descriptor): DescriptorInfo {
  const keys = descriptor.keys.map((key): DescriptorKeyInfo => {
    // Without an origin the key is its own master (as Bitcoin Core reports it).
    const fingerprint = key.origin?.fingerprint ?? keyFingerprint(key.kind === 'xpub' ? key.xpub.publicKey : key.publicKey.length === 32 ? Uint8Array.of(2, ...key.publicKey) : key.publicKey);
    const derivation = formatPath(key.origin?.path ?? []);
    const xpub = key.kind === 'xpub' ? encodeExtendedPublicKey(key.xpub, descriptor.network) : toHex(key.publicKey);
    return { fingerprint, derivation, xpub };
  });
  return {
    type: descriptor.type,
    addressType: scriptKind(descriptor.type).addressType,
    sigsRequired: descriptor.threshold,
    sigsTotal: descriptor.keys.length,
    keys,
  };
}

/** The three ways a wallet's keys are given (exactly one of them). */
export type WalletKeysInput =
  | { readonly descriptor: string }
  | { readonly recv_descriptor: string; readonly change_descriptor: string }
  | { readonly policy: WalletPolicy };

export interface WalletDescriptors extends DescriptorPair {
  readonly info: DescriptorInfo;
  /** `receive` and `change` as parsed here: whoever derives their addresses next need not parse them again. */
  readonly parsed: { readonly receive: Descriptor; readonly change: Descriptor };
}

const withoutLastStep = (key: KeyExpression): string =>
  key.kind === 'xpub' ? `${key.origin?.fingerprint}/${key.origin?.path.join('/')}/${toHex(key.xpub.publicKey)}/${key.steps.slice(0, -1).join('/')}` : toHex(key.publicKey);

/**
 * Canonical receive/change descriptors (with checksums) and the wallet summary from any of the three
 * inputs. A receive/change pair must be ranged, of the same shape and keys, differing only in the
 * step before `/*`.
 */
export function resolveWalletDescriptors(input: WalletKeysInput, network: Network): WalletDescriptors {
  if (typeof input !== 'object' || input === null) throw policyError('Give a descriptor, a receive/change descriptor pair, or a policy');
  const given = ['descriptor', 'recv_descriptor', 'policy'].filter((k) => k in input);
  if (given.length !== 1) throw policyError('Give exactly one of: descriptor, recv_descriptor with change_descriptor, policy');
  let pair: DescriptorPair;
  if ('policy' in input) pair = descriptorsFromPolicy(input.policy, network);
  else if ('descriptor' in input) {
    if (typeof input.descriptor !== 'string') throw policyError('descriptor must be text');
    pair = splitMultipath(parseDescriptor(input.descriptor, network));
  } else {
    if (typeof input.recv_descriptor !== 'string' || typeof input.change_descriptor !== 'string') {
      throw policyError('recv_descriptor and change_descriptor must both be given as text');
    }
    const receive = parseDescriptor(input.recv_descriptor, network);
    const change = parseDescriptor(input.change_descriptor, network);
    for (const d of [receive, change]) {
      if (multipathCount(d) > 1) throw new DescriptorError('multipath', 'Give the multipath descriptor alone, as descriptor');
      if (!d.keys.every((k) => k.kind === 'xpub' && k.wildcard)) {
        throw new DescriptorError('not_ranged', 'Wallet descriptors must derive one address per index: every key needs /*');
      }
    }
    const shape = (d: Descriptor) => JSON.stringify([d.type, d.threshold, d.keys.map(withoutLastStep)]);
    if (shape(receive) !== shape(change)) {
      throw policyError('recv_descriptor and change_descriptor must have the same type, threshold and keys');
    }
    pair = { receive: formatDescriptor(receive), change: formatDescriptor(change) };
    if (pair.receive === pair.change) throw policyError('recv_descriptor and change_descriptor must differ (e.g. /0/* and /1/*)');
  }
  const receive = parseDescriptor(pair.receive, network);
  if (!receive.keys.every((k) => k.kind === 'xpub' && k.wildcard)) {
    throw new DescriptorError('not_ranged', 'Wallet descriptors must derive one address per index: every key needs /*');
  }
  return { ...pair, info: describeDescriptor(receive), parsed: { receive, change: parseDescriptor(pair.change, network) } };
}
