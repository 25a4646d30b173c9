/**
 * BIP380 key expressions (with BIP389 multipath): `[fingerprint/origin/path]KEY/steps/*`, where
 * KEY is a hex public key or an extended public key in any SLIP-132 form of the network.
 */
import { hex } from '@scure/base';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { toHex } from '../bytes.js';
import type { Network } from '../network.js';
import { encodeExtendedPublicKey, isValidCompressedPoint, parseExtendedPublicKey, type ExtendedPublicKey } from '../keys/extended-key.js';
import { HARDENED } from '../keys/derive.js';
import { formatPathStep, parsePathStep } from '../keys/path.js';
import { CoreError } from '../errors.js';
import { DescriptorError } from './errors.js';
import { isWifKey } from '../keys/private-key.js';
import { quoteInput } from '../text.js';

export interface KeyOrigin {
  /** Master key fingerprint, 8 lower-case hex digits. */
  readonly fingerprint: string;
  readonly path: readonly number[];
}

/** One derivation step after an extended key: an index, or a BIP389 tuple `<a;b;...>`. */
export type DerivationStep = number | { readonly multipath: readonly number[] };

export type KeyExpression =
  | {
      readonly kind: 'xpub';
      readonly origin?: KeyOrigin;
      readonly xpub: ExtendedPublicKey;
      /** Non-hardened steps between the extended key and the wildcard (or the end). */
      readonly steps: readonly DerivationStep[];
      /** Ends with `/*`: one key per index. */
      readonly wildcard: boolean;
    }
  | {
      readonly kind: 'pubkey';
      readonly origin?: KeyOrigin;
      /** 33-byte compressed, 65-byte uncompressed, or 32-byte x-only (taproot only). */
      readonly publicKey: Uint8Array;
    };

const HEX = /^[0-9a-fA-F]*$/;

function parseOrigin(text: string): { origin?: KeyOrigin; rest: string } {
  if (!text.startsWith('[')) {
    if (text.includes(']') || text.includes('[')) throw new DescriptorError('invalid_key', 'Misplaced key origin brackets');
    return { rest: text };
  }
  const close = text.indexOf(']');
  if (close < 0) throw new DescriptorError('invalid_key', 'Key origin is missing its closing ]');
  const inner = text.slice(1, close);
  const rest = text.slice(close + 1);
  if (rest.includes('[') || rest.includes(']')) throw new DescriptorError('invalid_key', 'Only one key origin is allowed');
  const [fingerprint = '', ...steps] = inner.split('/');
  if (fingerprint.length !== 8 || !HEX.test(fingerprint)) {
    throw new DescriptorError('invalid_key', `Key origin fingerprint must be 8 hex digits, got ${quoteInput(fingerprint, 20)}`);
  }
  return { origin: { fingerprint: fingerprint.toLowerCase(), path: steps.map(parseStep) }, rest };
}

function parseStep(text: string): number {
  try {
    return parsePathStep(text);
  } catch (e) {
    throw new DescriptorError('invalid_key', e instanceof CoreError ? e.message : 'Invalid derivation step');
  }
}

function parseHexKey(text: string, allowXOnly: boolean): Uint8Array {
  if (text.length % 2 !== 0) throw new DescriptorError('invalid_key', `Invalid public key ${quoteInput(text, 40)}: an odd number of hex digits`);
  const bytes = hex.decode(text.toLowerCase());
  if (bytes.length === 32) {
    if (!allowXOnly) throw new DescriptorError('invalid_key', 'x-only public keys are only allowed in tr()');
    if (!isValidCompressedPoint(Uint8Array.of(2, ...bytes))) throw new DescriptorError('invalid_key', 'Invalid x-only public key: not a point on the curve');
    return bytes;
  }
  if (bytes.length === 33) {
    if (!isValidCompressedPoint(bytes)) throw new DescriptorError('invalid_key', `Invalid public key ${text}`);
    return bytes;
  }
  if (bytes.length === 65 && bytes[0] === 4) {
    try {
      secp256k1.Point.fromBytes(bytes);
    } catch {
      throw new DescriptorError('invalid_key', `Invalid public key ${text}`);
    }
    return bytes;
  }
  throw new DescriptorError('invalid_key', `Invalid public key ${text}: wrong length`);
}

function parseSteps(parts: string[]): { steps: DerivationStep[]; wildcard: boolean } {
  const steps: DerivationStep[] = [];
  let wildcard = false;
  parts.forEach((part) => {
    if (wildcard) throw new DescriptorError('invalid_key', 'The wildcard * must be the last derivation step');
    if (part === '*') {
      wildcard = true;
      return;
    }
    if (part === '*h' || part === "*'") {
      throw new DescriptorError('hardened_derivation', 'Hardened wildcard derivation needs private keys, which the service does not hold');
    }
    if (part.startsWith('<') || part.endsWith('>')) {
      if (!part.startsWith('<') || !part.endsWith('>')) throw new DescriptorError('invalid_key', `Malformed multipath step ${quoteInput(part, 40)}`);
      if (steps.some((s) => typeof s !== 'number')) throw new DescriptorError('multipath', 'Only one multipath <a;b> step is allowed per key');
      const values = part.slice(1, -1).split(';').map(parseStep);
      if (values.length < 2) throw new DescriptorError('multipath', `Multipath step ${quoteInput(part, 40)} needs at least two values`);
      if (new Set(values).size !== values.length) throw new DescriptorError('multipath', `Multipath step ${quoteInput(part, 40)} repeats a value`);
      if (values.some((v) => v >= HARDENED)) {
        throw new DescriptorError('hardened_derivation', 'Hardened derivation after an extended public key is impossible');
      }
      steps.push({ multipath: values });
      return;
    }
    const step = parseStep(part);
    if (step >= HARDENED) {
      throw new DescriptorError('hardened_derivation', `Hardened step ${part} after an extended public key is impossible (it needs the private key)`);
    }
    steps.push(step);
  });
  return { steps, wildcard };
}

export interface KeyContext {
  readonly network: Network;
  /** Only compressed keys (segwit v0). */
  readonly compressedOnly: boolean;
  /** Taproot: x-only keys allowed, uncompressed refused. */
  readonly taproot: boolean;
}

export function parseKeyExpression(text: string, context: KeyContext): KeyExpression {
  if (text.length === 0) throw new DescriptorError('invalid_key', 'Missing key');
  const { origin, rest } = parseOrigin(text);
  const [keyText = '', ...stepParts] = rest.split('/');
  if (keyText.length === 0) throw new DescriptorError('invalid_key', 'Missing key after the key origin');
  if (isWifKey(keyText)) {
    throw new DescriptorError('private_key', 'Private keys are not accepted: the service holds public keys only');
  }
  if (HEX.test(keyText) && keyText.length <= 130) {
    if (stepParts.length > 0) throw new DescriptorError('invalid_key', 'A plain public key cannot have derivation steps');
    const publicKey = parseHexKey(keyText, context.taproot);
    if (publicKey.length === 65 && (context.compressedOnly || context.taproot)) {
      throw new DescriptorError('invalid_key', 'Uncompressed public keys are not allowed in segwit or taproot descriptors');
    }
    return origin ? { kind: 'pubkey', origin, publicKey } : { kind: 'pubkey', publicKey };
  }
  let xpub: ExtendedPublicKey;
  try {
    xpub = parseExtendedPublicKey(keyText, context.network);
  } catch (e) {
    if (e instanceof CoreError) throw new DescriptorError(e.code, e.message);
    throw e;
  }
  const { steps, wildcard } = parseSteps(stepParts);
  return origin ? { kind: 'xpub', origin, xpub, steps, wildcard } : { kind: 'xpub', xpub, steps, wildcard };
}

const formatStep = (step: DerivationStep): string =>
  typeof step === 'number' ? formatPathStep(step) : `<${step.multipath.map(formatPathStep).join(';')}>`;

/** Canonical text: origin with `h` markers, xpub/tpub version, lower-case hex. */
export function formatKeyExpression(key: KeyExpression, network: Network): string {
  const origin = key.origin ? `[${[key.origin.fingerprint, ...key.origin.path.map(formatPathStep)].join('/')}]` : '';
  if (key.kind === 'pubkey') return origin + toHex(key.publicKey);
  const parts = [encodeExtendedPublicKey(key.xpub, network), ...key.steps.map(formatStep)];
  if (key.wildcard) parts.push('*');
  return origin + parts.join('/');
}

/** Number of branches of the key's multipath step (1 without one). */
export const multipathWidth = (key: KeyExpression): number =>
  key.kind === 'xpub' ? Math.max(1, ...key.steps.map((s) => (typeof s === 'number' ? 1 : s.multipath.length))) : 1;

/** The key with its multipath step replaced by branch `branch`. */
export function selectMultipath(key: KeyExpression, branch: number): KeyExpression {
  if (key.kind !== 'xpub') return key;
  return { ...key, steps: key.steps.map((s) => (typeof s === 'number' ? s : s.multipath[branch]!)) };
}
