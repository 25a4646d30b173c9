/** Shared steps of the wallet file readers and writers: descriptors from what a file gives, and back. */
import {
  DescriptorDeriver,
  formatDescriptor,
  multipathCount,
  parseDescriptor,
  resolveWalletDescriptors,
  type Descriptor,
  type KeyExpression,
  type WalletDescriptors,
} from '../descriptor/index.js';
import { toHex } from '../bytes.js';
import type { Network } from '../network.js';
import { fileError, WalletFileError } from './types.js';

const withLastStep = (key: KeyExpression, step: number): KeyExpression =>
  key.kind === 'xpub' ? { ...key, steps: [...key.steps.slice(0, -1), step] } : key;

/**
 * The receive/change pair of a descriptor that gives only one branch: a receive descriptor ending in
 * `/0/*` (change: `/1/*`), or account keys without steps (Specter's older exports: `/0/*` and `/1/*` added).
 */
function branchesOfSingle(descriptor: Descriptor): { receive: Descriptor; change: Descriptor } {
  const xpubs = descriptor.keys.filter((k) => k.kind === 'xpub');
  if (xpubs.length !== descriptor.keys.length) throw fileError('Every key of a wallet descriptor must be an extended public key (xpub)');
  if (xpubs.every((k) => k.steps.length === 0 && !k.wildcard)) {
    const branch = (step: number): Descriptor => ({ ...descriptor, keys: xpubs.map((k) => ({ ...k, steps: [step], wildcard: true })) });
    return { receive: branch(0), change: branch(1) };
  }
  if (xpubs.every((k) => k.wildcard && k.steps.length > 0 && k.steps[k.steps.length - 1] === 0)) {
    return { receive: descriptor, change: { ...descriptor, keys: descriptor.keys.map((k) => withLastStep(k, 1)) } };
  }
  throw fileError('A single descriptor must be multipath (/<0;1>/*) or a receive descriptor ending in /0/*');
}

/** The wallet's descriptors from one descriptor (multipath, receive-only or account-level) or a receive/change pair. */
export function descriptorsFromTexts(texts: readonly string[], network: Network): WalletDescriptors {
  let result: WalletDescriptors;
  if (texts.length === 2) {
    result = resolveWalletDescriptors({ recv_descriptor: texts[0]!, change_descriptor: texts[1]! }, network);
  } else if (texts.length === 1) {
    const parsed = parseDescriptor(texts[0]!, network);
    if (multipathCount(parsed) > 1) result = resolveWalletDescriptors({ descriptor: texts[0]! }, network);
    else {
      const { receive, change } = branchesOfSingle(parsed);
      result = resolveWalletDescriptors({ recv_descriptor: formatDescriptor(receive), change_descriptor: formatDescriptor(change) }, network);
    }
  } else {
    throw fileError(`Expected one multipath descriptor or a receive/change pair, found ${texts.length} descriptors`);
  }
  checkDistinctKeys(parseDescriptor(result.receive, network));
  return result;
}

/** A key given twice would let one signer count twice towards the threshold. */
export function checkDistinctKeys(descriptor: Descriptor): void {
  const seen = new Set<string>();
  for (const [i, key] of descriptor.keys.entries()) {
    const id = key.kind === 'xpub' ? toHex(key.xpub.publicKey) : toHex(key.publicKey);
    if (seen.has(id)) throw new WalletFileError('repeated_key', `Key ${i + 1} repeats an earlier key`);
    seen.add(id);
  }
}

/** The `<receive;change>` multipath descriptor of a wallet's pair (BIP389), checksum included. */
export function multipathOf(receiveText: string, changeText: string, network: Network): Descriptor {
  const receive = parseDescriptor(receiveText, network);
  const change = parseDescriptor(changeText, network);
  const keys = receive.keys.map((key, i): KeyExpression => {
    const other = change.keys[i]!;
    if (key.kind !== 'xpub' || other.kind !== 'xpub' || key.steps.length === 0) throw fileError('Wallet descriptors have ranged xpub keys', 'export_unsupported');
    const r = key.steps[key.steps.length - 1]!;
    const c = other.steps[other.steps.length - 1]!;
    if (typeof r !== 'number' || typeof c !== 'number') throw fileError('Wallet descriptors have ranged xpub keys', 'export_unsupported');
    return { ...key, steps: [...key.steps.slice(0, -1), { multipath: [r, c] }] };
  });
  return { ...receive, keys };
}

/** `h` hardened markers of key origins written as `'`, the form BIP129, Coldcard and Caravan print. */
export const withApostrophes = (text: string): string => text.replace(/\[[^\]]*\]/g, (origin) => origin.replace(/(\d+)h/g, "$1'"));

/** `m/48h/1h/0h/2h` as `m/48'/1'/0'/2'`. */
export const pathWithApostrophes = (path: string): string => path.replace(/(\d+)h/g, "$1'");

/** Address at receive index 0. */
export const firstAddress = (receive: string, network: Network): string => new DescriptorDeriver(parseDescriptor(receive, network)).derive(0).address;

/** Lines of a text file without blank lines and without `#` comment lines. */
export const contentLines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

/**
 * The receive descriptor, parsed, when the wallet follows the usual account layout: every key an
 * account xpub with receive `/0/*` and change `/1/*`. Formats that name only account keys need it.
 */
export function accountLayout(receiveText: string, changeText: string, network: Network, format: string): Descriptor {
  const receive = parseDescriptor(receiveText, network);
  const change = parseDescriptor(changeText, network);
  const layout = (d: Descriptor, step: number) => d.keys.every((k) => k.kind === 'xpub' && k.wildcard && k.steps.length === 1 && k.steps[0] === step);
  if (!layout(receive, 0) || !layout(change, 1)) {
    throw fileError(`${format} files describe account keys with receive /0/* and change /1/* branches only`, 'export_unsupported');
  }
  return receive;
}
