/** Validation of wallet creation and update input: names, alias, keys, birthday, sharing. */
import { DescriptorDeriver, resolveWalletDescriptors, type DescriptorInfo, type WalletKeysInput } from '../core/descriptor/index.js';
import { CoreError } from '../core/errors.js';
import { NETWORKS, type NetworkName } from '../core/network.js';
import { textProblem, type TextOptions } from '../core/text.js';
import { DEFAULT_GAP_LIMIT } from '../engine/index.js';
import { ServiceError, invalidField } from './errors.js';
import { miniscriptFromDescriptor, miniscriptFromPair, miniscriptFromPolicy, type ResolvedMiniscriptKeys } from './miniscript-input.js';
import { MiniscriptDeriver, type BranchDeriver } from './miniscript-wallet.js';

export const ALIAS_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const MAX_GAP_LIMIT = 1_000;
export const MAX_NAME_CHARS = 128;
export const MAX_DESCRIPTION_CHARS = 1_024;
export const MAX_LABEL_CHARS = 256;

export interface WalletCreateInput {
  name?: unknown;
  alias?: unknown;
  description?: unknown;
  descriptor?: unknown;
  recv_descriptor?: unknown;
  change_descriptor?: unknown;
  policy?: unknown;
  key_labels?: unknown;
  birthday?: unknown;
  gap_limit?: unknown;
  shared_with?: unknown;
  /** Text of a wallet setup file (descriptors, BSMS, Coldcard, Specter, Caravan) instead of the keys. */
  import?: unknown;
  import_format?: unknown;
}

export interface WalletUpdateInput {
  name?: unknown;
  description?: unknown;
  gap_limit?: unknown;
  labels?: unknown;
  shared_with?: unknown;
}

export type Birthday = { kind: 'tip' } | { kind: 'height'; height: number } | { kind: 'date'; epochSeconds: number };

/**
 * `text` when it may be a name, label or description (core/text.ts: no control or bidirectional
 * characters, no private key); otherwise 400 naming `path`. Names and labels are single-line: TAB is
 * refused there too, as it would forge columns wherever they are listed.
 */
export function checkText(text: string, path: string, options: TextOptions = {}): string {
  const problem = textProblem(text, options);
  if (problem) throw invalidField(path, problem);
  return text;
}

export function checkName(value: unknown, path = '/name'): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidField(path, 'is required (non-empty text)');
  const name = value.trim();
  if (name.length > MAX_NAME_CHARS) throw invalidField(path, `must be at most ${MAX_NAME_CHARS} characters`);
  return checkText(name, path);
}

export function checkDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalidField('/description', 'must be text');
  if (value.length > MAX_DESCRIPTION_CHARS) throw invalidField('/description', `must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  return checkText(value, '/description', { multiline: true });
}

/** A label of a key, address, coin or recipient: text of at most MAX_LABEL_CHARS, single-line. */
export function checkLabel(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length > MAX_LABEL_CHARS) throw invalidField(path, `must be text of at most ${MAX_LABEL_CHARS} characters`);
  return checkText(value, path);
}

/** An alias from a name: lower case, runs of other characters become `-`. */
export function aliasFromName(name: string): string {
  const alias = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents go, their letters stay
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return alias === '' ? 'wallet' : alias;
}

export function checkAlias(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !ALIAS_PATTERN.test(value)) {
    throw invalidField('/alias', 'must be 1 to 64 characters of a-z, 0-9, _ and -');
  }
  return value;
}

export function checkGapLimit(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_GAP_LIMIT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_GAP_LIMIT) {
    throw invalidField('/gap_limit', `must be an integer from 1 to ${MAX_GAP_LIMIT}`);
  }
  return value;
}

/**
 * The operator's ceiling on a new wallet's gap limit (`max_gap_limit`): every derived address costs
 * memory and work on every sync pass. Other faults of the value are checkGapLimit's (400).
 */
export function checkGapLimitWithin(value: unknown, max: number): void {
  if (typeof value === 'number' && Number.isInteger(value) && value > max) {
    throw new ServiceError('unprocessable', 'gap_limit_too_high', `gap_limit must be at most ${max} on this service`, {
      errors: [{ path: '/gap_limit', message: `must be at most ${max} on this service` }],
    });
  }
}

export function checkBirthday(value: unknown): Birthday {
  if (value === undefined || value === null || value === '') return { kind: 'tip' };
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw invalidField('/birthday', 'must be a block height (integer >= 0) or a date YYYY-MM-DD');
    return { kind: 'height', height: value };
  }
  if (typeof value === 'string') {
    if (/^\d{1,9}$/.test(value)) return { kind: 'height', height: Number(value) };
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (match) {
      const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
      const back = new Date(ms);
      if (back.getUTCFullYear() === Number(match[1]) && back.getUTCMonth() === Number(match[2]) - 1 && back.getUTCDate() === Number(match[3])) {
        return { kind: 'date', epochSeconds: ms / 1000 };
      }
    }
  }
  throw invalidField('/birthday', 'must be a block height (integer >= 0) or a date YYYY-MM-DD');
}

export interface KeyLabel {
  fingerprint: string;
  label: string;
}

/** `[{fingerprint, label}]`; labels apply to every key of that master fingerprint. */
export function checkKeyLabels(value: unknown, path: string): KeyLabel[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidField(path, 'must be a list of {fingerprint, label}');
  return value.map((item: unknown, i) => {
    const entry = item as { fingerprint?: unknown; label?: unknown } | null;
    if (typeof entry?.fingerprint !== 'string' || !/^[0-9a-fA-F]{8}$/.test(entry.fingerprint)) {
      throw invalidField(`${path}/${i}/fingerprint`, 'must be 8 hex digits');
    }
    return { fingerprint: entry.fingerprint.toLowerCase(), label: checkLabel(entry.label, `${path}/${i}/label`) };
  });
}

export interface ShareInput {
  userName: string;
  access: 'read' | 'spend';
}

export function checkShares(value: unknown): ShareInput[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidField('/shared_with', 'must be a list of {user, access}');
  const seen = new Set<string>();
  return value.map((item: unknown, i) => {
    const entry = item as { user?: unknown; access?: unknown } | null;
    if (typeof entry?.user !== 'string' || entry.user === '') throw invalidField(`/shared_with/${i}/user`, 'must be a user name');
    if (entry.access !== 'read' && entry.access !== 'spend') throw invalidField(`/shared_with/${i}/access`, 'must be "read" or "spend"');
    if (seen.has(entry.user)) throw invalidField(`/shared_with/${i}/user`, 'is listed twice');
    seen.add(entry.user);
    return { userName: entry.user, access: entry.access };
  });
}

/** A wallet's receive and change descriptors and what the wallet details show of them. */
export interface ResolvedDescriptors {
  readonly receive: string;
  readonly change: string;
  readonly info: Pick<DescriptorInfo, 'addressType' | 'sigsRequired' | 'sigsTotal' | 'keys'>;
  /** Receive and change derivers of the descriptors as checked, when they were parsed: the new wallet's addresses come from them. */
  readonly derivers?: readonly [BranchDeriver, BranchDeriver];
}

/**
 * Keys the fixed shapes refuse as unsupported may be miniscript (wsh(or_d(...)), tr(KEY,{...})): read as such,
 * with the miniscript's own refusal (not sane, malleable...) when it is one.
 */
function resolveAny(keysInput: WalletKeysInput, network: NetworkName): ResolvedDescriptors & { labels?: (string | undefined)[] } {
  const net = NETWORKS[network];
  if ('policy' in keysInput && (keysInput.policy as { type?: unknown }).type === 'paths') return withMiniscriptDerivers(miniscriptFromPolicy(keysInput.policy as never, net));
  try {
    const { parsed, ...resolved } = resolveWalletDescriptors(keysInput, net);
    return { ...resolved, derivers: [new DescriptorDeriver(parsed.receive), new DescriptorDeriver(parsed.change)] };
  } catch (error) {
    if (!(error instanceof CoreError) || error.code !== 'unsupported' || 'policy' in keysInput) throw error;
    if ('descriptor' in keysInput) return withMiniscriptDerivers(miniscriptFromDescriptor(keysInput.descriptor, net));
    return withMiniscriptDerivers(miniscriptFromPair(keysInput.recv_descriptor, keysInput.change_descriptor, net));
  }
}

function withMiniscriptDerivers({ parsed, ...resolved }: ResolvedMiniscriptKeys): ResolvedDescriptors & { labels?: (string | undefined)[] } {
  return parsed ? { ...resolved, derivers: [new MiniscriptDeriver(parsed.receive), new MiniscriptDeriver(parsed.change)] } : resolved;
}

/** The wallet's descriptors and summary; descriptor and key problems are 400 naming them, keys of another network 422. */
export function resolveKeys(input: WalletCreateInput, network: NetworkName): { descriptors: ResolvedDescriptors; path: string; policyLabels: (string | undefined)[] } {
  const given = (['descriptor', 'recv_descriptor', 'policy'] as const).filter((k) => input[k] !== undefined && input[k] !== null);
  if (given.length !== 1 || (input.recv_descriptor !== undefined) !== (input.change_descriptor !== undefined)) {
    throw new ServiceError('invalid_input', 'invalid_request', 'Give exactly one of: descriptor, recv_descriptor with change_descriptor, policy', {
      errors: [{ path: '', message: 'give exactly one of: descriptor, recv_descriptor with change_descriptor, policy' }],
    });
  }
  const path = `/${given[0]!}`;
  let keysInput: WalletKeysInput;
  let policyLabels: (string | undefined)[] = [];
  if (given[0] === 'policy') {
    const policy = input.policy as { type?: unknown; threshold?: unknown; keys?: unknown } | null;
    const paths = typeof policy === 'object' && policy !== null && policy.type === 'paths';
    if (!paths && (typeof policy !== 'object' || policy === null || !Array.isArray(policy.keys))) throw invalidField('/policy', 'must be {type, threshold, keys: [{key, label}]}');
    if (!paths) policyLabels = (policy!.keys as Array<{ label?: unknown } | null>).map((k) => (typeof k?.label === 'string' ? k.label : undefined));
    keysInput = { policy: policy as never };
  } else if (given[0] === 'descriptor') {
    keysInput = { descriptor: input.descriptor as string };
  } else {
    keysInput = { recv_descriptor: input.recv_descriptor as string, change_descriptor: input.change_descriptor as string };
  }
  try {
    const resolved = resolveAny(keysInput, network);
    return { descriptors: resolved, path, policyLabels: resolved.labels ?? policyLabels };
  } catch (error) {
    if (error instanceof CoreError) {
      if (error.code === 'wrong_network') {
        throw new ServiceError('unprocessable', 'wrong_network', `${path.slice(1)}: ${error.message}`, { errors: [{ path, message: error.message }] });
      }
      throw new ServiceError('invalid_input', error.code, `Invalid ${path.slice(1)}: ${error.message}`, { errors: [{ path, message: error.message }] });
    }
    throw error;
  }
}
