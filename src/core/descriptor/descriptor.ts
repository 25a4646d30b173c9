/**
 * Output descriptors the service supports, parsed from and printed to BIP380 text:
 * pkh(KEY), wpkh(KEY), sh(wpkh(KEY)), tr(KEY) (key path only), wsh(multi|sortedmulti),
 * sh(wsh(multi|sortedmulti)) and sh(multi|sortedmulti). Anything else is refused with a
 * DescriptorError that names it.
 */
import type { Network } from '../network.js';
import { addChecksum, stripChecksum } from './checksum.js';
import { DescriptorError } from './errors.js';
import { formatKeyExpression, multipathWidth, parseKeyExpression, selectMultipath, type KeyContext, type KeyExpression } from './key-expression.js';
import { hidePrivateKeys } from '../keys/private-key.js';
import { quoteInput } from '../text.js';
import { kindOfExpressions, scriptKind } from '../script-kinds/index.js';

/** The supported shapes; the same names as the wallet policy types of the API. */
export const DESCRIPTOR_TYPES = [
  'wpkh',
  'sh-wpkh',
  'pkh',
  'tr',
  'wsh-sortedmulti',
  'wsh-multi',
  'sh-wsh-sortedmulti',
  'sh-wsh-multi',
  'sh-sortedmulti',
  'sh-multi',
] as const;
export type DescriptorType = (typeof DESCRIPTOR_TYPES)[number];

export const isDescriptorType = (text: unknown): text is DescriptorType =>
  typeof text === 'string' && (DESCRIPTOR_TYPES as readonly string[]).includes(text);

export interface Descriptor {
  readonly type: DescriptorType;
  readonly network: Network;
  /** Signatures needed: the multisig threshold, 1 for single-key types. */
  readonly threshold: number;
  readonly keys: readonly KeyExpression[];
}

const SUPPORTED =
  'Supported: pkh(KEY), wpkh(KEY), sh(wpkh(KEY)), tr(KEY), wsh(multi|sortedmulti(...)), sh(wsh(multi|sortedmulti(...))), sh(multi|sortedmulti(...))';

/** Script expressions of BIP380-390 and miniscript that are valid elsewhere but not supported here. */
const KNOWN_UNSUPPORTED = new Set([
  'pk', 'pkh', 'wpkh', 'combo', 'raw', 'addr', 'multi', 'sortedmulti', 'multi_a', 'sortedmulti_a', 'rawtr', 'musig', 'tr', 'sh', 'wsh',
  'and_v', 'and_b', 'and_n', 'or_b', 'or_c', 'or_d', 'or_i', 'andor', 'thresh', 'older', 'after', 'sha256', 'hash256', 'ripemd160',
  'hash160', 'pk_k', 'pk_h', 'v', 'a', 's', 'c', 'd', 'j', 'n', 'l', 'u', 't',
]);

const MAX_KEYS = { sh: 15, wsh: 20 } as const;

interface Call {
  readonly name: string;
  readonly args: string[];
}

/** `name(arg, arg, ...)` split at top-level commas, or undefined when the text is no call. */
function parseCall(text: string): Call | undefined {
  const open = text.indexOf('(');
  if (open <= 0 || !text.endsWith(')')) return undefined;
  const name = text.slice(0, open);
  if (!/^[a-z_:]+$/.test(name)) return undefined;
  const inner = text.slice(open + 1, -1);
  const args: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth < 0) throw new DescriptorError('invalid_descriptor', 'Unbalanced brackets in descriptor');
    } else if (c === ',' && depth === 0) {
      args.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new DescriptorError('invalid_descriptor', 'Unbalanced brackets in descriptor');
  args.push(inner.slice(start));
  return { name, args };
}

function unsupported(what: string): DescriptorError {
  return new DescriptorError('unsupported', `Unsupported descriptor: ${what} is not supported by this service. ${SUPPORTED}`);
}

function nameOf(call: Call, outer: string[]): string {
  return [...outer, call.name].map((n) => `${n}(`).join('') + ')'.repeat(outer.length + 1);
}

function requireCall(text: string, where: string): Call {
  const call = parseCall(text);
  if (!call) {
    if (/^[a-z_:]+\(/.test(text)) throw new DescriptorError('invalid_descriptor', `Malformed expression in ${where}`);
    throw new DescriptorError('invalid_descriptor', `${where} expects a script expression, not ${quoteInput(text, 80)}`);
  }
  return call;
}

function singleKey(call: Call, context: KeyContext): KeyExpression {
  if (call.args.length !== 1) throw new DescriptorError('invalid_descriptor', `${call.name}() takes exactly one key`);
  const arg = call.args[0]!;
  if (parseCall(arg) || arg.includes('(')) throw new DescriptorError('invalid_descriptor', `${call.name}() only accepts a key, not a script`);
  return parseKeyExpression(arg, context);
}

function parseMulti(call: Call, context: KeyContext, maxKeys: number): { threshold: number; keys: KeyExpression[] } {
  const [thresholdText = '', ...keyTexts] = call.args;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(thresholdText)) {
    throw new DescriptorError('invalid_threshold', `Multisig threshold must be a number, got ${quoteInput(thresholdText, 20)}`);
  }
  const threshold = Number(thresholdText);
  if (keyTexts.length === 0) throw new DescriptorError('invalid_descriptor', `${call.name}() needs at least one key`);
  if (keyTexts.length > maxKeys) {
    throw new DescriptorError('invalid_descriptor', `${call.name}() has ${keyTexts.length} keys; at most ${maxKeys} are allowed here`);
  }
  if (threshold < 1 || threshold > keyTexts.length) {
    throw new DescriptorError('invalid_threshold', `Multisig threshold ${threshold} must be between 1 and the number of keys (${keyTexts.length})`);
  }
  const keys = keyTexts.map((k) => {
    if (k.includes('(')) throw new DescriptorError('invalid_descriptor', `${call.name}() only accepts keys`);
    return parseKeyExpression(k, context);
  });
  return { threshold, keys };
}

/** The type of the script kind these expressions (outermost first) make; the grammar above only builds known ones. */
function typeOf(expressions: readonly string[]): DescriptorType {
  const kind = kindOfExpressions(expressions);
  if (!kind) throw new DescriptorError('unsupported', `Unsupported descriptor: ${expressions.join('(')}. ${SUPPORTED}`);
  return kind.type;
}

function isMulti(call: Call): call is Call & { name: 'multi' | 'sortedmulti' } {
  return call.name === 'multi' || call.name === 'sortedmulti';
}

function interpret(body: string, network: Network): Omit<Descriptor, 'network'> {
  const plain: KeyContext = { network, compressedOnly: false, taproot: false };
  const segwit: KeyContext = { network, compressedOnly: true, taproot: false };
  const top = requireCall(body, 'A descriptor');
  switch (top.name) {
    case 'pkh':
      return { type: typeOf(['pkh']), threshold: 1, keys: [singleKey(top, plain)] };
    case 'wpkh':
      return { type: typeOf(['wpkh']), threshold: 1, keys: [singleKey(top, segwit)] };
    case 'tr': {
      if (top.args.length === 2) throw unsupported('tr() with a script tree (only key-path tr(KEY) is)');
      return { type: typeOf(['tr']), threshold: 1, keys: [singleKey(top, { network, compressedOnly: true, taproot: true })] };
    }
    case 'wsh': {
      if (top.args.length !== 1) throw new DescriptorError('invalid_descriptor', 'wsh() takes one script');
      const inner = requireCall(top.args[0]!, 'wsh()');
      if (isMulti(inner)) {
        const { threshold, keys } = parseMulti(inner, segwit, MAX_KEYS.wsh);
        return { type: typeOf(['wsh', inner.name]), threshold, keys };
      }
      if (['wpkh', 'wsh', 'sh', 'tr'].includes(inner.name)) throw new DescriptorError('invalid_descriptor', `${inner.name}() cannot be inside wsh()`);
      throw KNOWN_UNSUPPORTED.has(inner.name) ? unsupported(nameOf(inner, ['wsh'])) : unknown(inner.name);
    }
    case 'sh': {
      if (top.args.length !== 1) throw new DescriptorError('invalid_descriptor', 'sh() takes one script');
      const inner = requireCall(top.args[0]!, 'sh()');
      if (inner.name === 'wpkh') return { type: typeOf(['sh', 'wpkh']), threshold: 1, keys: [singleKey(inner, segwit)] };
      if (isMulti(inner)) {
        const { threshold, keys } = parseMulti(inner, plain, MAX_KEYS.sh);
        return { type: typeOf(['sh', inner.name]), threshold, keys };
      }
      if (inner.name === 'wsh') {
        if (inner.args.length !== 1) throw new DescriptorError('invalid_descriptor', 'wsh() takes one script');
        const script = requireCall(inner.args[0]!, 'wsh()');
        if (isMulti(script)) {
          const { threshold, keys } = parseMulti(script, segwit, MAX_KEYS.wsh);
          return { type: typeOf(['sh', 'wsh', script.name]), threshold, keys };
        }
        if (['wpkh', 'wsh', 'sh', 'tr'].includes(script.name)) {
          throw new DescriptorError('invalid_descriptor', `${script.name}() cannot be inside wsh()`);
        }
        throw KNOWN_UNSUPPORTED.has(script.name) ? unsupported(nameOf(script, ['sh', 'wsh'])) : unknown(script.name);
      }
      if (['sh', 'tr'].includes(inner.name)) throw new DescriptorError('invalid_descriptor', `${inner.name}() cannot be inside sh()`);
      throw KNOWN_UNSUPPORTED.has(inner.name) ? unsupported(nameOf(inner, ['sh'])) : unknown(inner.name);
    }
    default:
      throw KNOWN_UNSUPPORTED.has(top.name) ? unsupported(`${top.name}()`) : unknown(top.name);
  }
}

function unknown(name: string): DescriptorError {
  return new DescriptorError('invalid_descriptor', `Unknown script expression ${hidePrivateKeys(name).slice(0, 40)}()`);
}

/**
 * Parses a descriptor for `network`. A checksum, when present, must be right. Throws
 * DescriptorError (see its codes) and nothing else.
 */
export function parseDescriptor(text: string, network: Network): Descriptor {
  if (typeof text !== 'string' || text.length === 0) throw new DescriptorError('invalid_descriptor', 'Empty descriptor');
  if (text.length > 10_000) throw new DescriptorError('invalid_descriptor', 'Descriptor is too long');
  const { body } = stripChecksum(text);
  const parsed = interpret(body, network);
  scriptKind(parsed.type).checkKeys?.(parsed.keys);
  const widths = new Set(parsed.keys.map(multipathWidth).filter((w) => w > 1));
  if (widths.size > 1) throw new DescriptorError('multipath', 'All multipath <a;b> steps of a descriptor must have the same number of values');
  return { ...parsed, network };
}

/** The text without checksum: the kind's script expressions around the threshold (multisig kinds) and keys. */
function body(descriptor: Descriptor): string {
  const kind = scriptKind(descriptor.type);
  const keys = descriptor.keys.map((k) => formatKeyExpression(k, descriptor.network));
  const args = (kind.multisig ? [String(descriptor.threshold), ...keys] : keys).join(',');
  return kind.expressions.reduceRight((inner, name) => `${name}(${inner})`, args);
}

/** Canonical text with checksum: `h` hardened markers, xpub/tpub versions, lower-case hex. */
export const formatDescriptor = (descriptor: Descriptor): string => addChecksum(body(descriptor));

/** Parses and prints again: the canonical form of any accepted descriptor text (checksum added). */
export const normalizeDescriptor = (text: string, network: Network): string => formatDescriptor(parseDescriptor(text, network));

/** Number of descriptors a multipath descriptor stands for (1 when it has no `<a;b>` step). */
export const multipathCount = (descriptor: Descriptor): number => Math.max(1, ...descriptor.keys.map(multipathWidth));

/** The single-path descriptors of a multipath one, in order (BIP389); itself when it has none. */
export function expandMultipath(descriptor: Descriptor): Descriptor[] {
  const count = multipathCount(descriptor);
  if (count === 1) return [descriptor];
  return Array.from({ length: count }, (_, branch) => ({ ...descriptor, keys: descriptor.keys.map((k) => selectMultipath(k, branch)) }));
}

/** True when every key ends in a wildcard `/*` (one script per index). */
export const isRanged = (descriptor: Descriptor): boolean => descriptor.keys.some((k) => k.kind === 'xpub' && k.wildcard);
