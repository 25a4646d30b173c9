/** Wallet setup files: detect the format, read one into a wallet's descriptors, write a wallet in any format. */
import type { Network } from '../network.js';
import { readBsms, writeBsms } from './bsms.js';
import { readCaravan, writeCaravan } from './caravan.js';
import { readColdcard, writeColdcard } from './coldcard.js';
import { readDescriptorFile, writeDescriptorFile } from './descriptor-file.js';
import { readSpecter, writeSpecter } from './specter.js';
import { fileError, WalletFileError, type WalletFile, type WalletFileFormat, type WalletForExport, type WalletSetup } from './types.js';

export * from './types.js';

/** Most characters a wallet file may have (a 20-key multisig file is a few kilobytes). */
export const MAX_WALLET_FILE_CHARS = 100_000;

function parseJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw fileError('The file is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fileError('The file must be a JSON object');
  return value as Record<string, unknown>;
}

/** The format of a wallet file, from its content. */
export function detectWalletFileFormat(text: string): WalletFileFormat {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const json = parseJson(trimmed);
    if ('extendedPublicKeys' in json || 'quorum' in json) return 'caravan';
    if ('descriptor' in json) return 'specter';
    throw new WalletFileError('unknown_wallet_file', 'A JSON wallet file must be a Caravan configuration or a Specter wallet export');
  }
  if (/^BSMS\b/.test(trimmed)) return 'bsms';
  if (/^\s*(policy|format|derivation)\s*:/im.test(trimmed) || /^\s*[0-9a-f]{8}\s*:\s*[a-z]pub/im.test(trimmed)) return 'coldcard';
  if (/\b(wpkh|wsh|sh|pkh|tr)\(/.test(trimmed)) return 'descriptor';
  throw new WalletFileError('unknown_wallet_file', 'Unrecognised wallet file: expected descriptors, a BSMS record, a Coldcard setup file, or Specter or Caravan JSON');
}

/** Reads a wallet file (format detected unless given) for `network`. Throws CoreErrors naming the problem. */
export function readWalletFile(text: string, network: Network, format?: WalletFileFormat): WalletSetup {
  if (text.length > MAX_WALLET_FILE_CHARS) throw fileError(`A wallet file has at most ${MAX_WALLET_FILE_CHARS} characters`);
  const chosen = format ?? detectWalletFileFormat(text);
  switch (chosen) {
    case 'descriptor':
      return readDescriptorFile(text, network);
    case 'bsms':
      return readBsms(text, network);
    case 'coldcard':
      return readColdcard(text, network);
    case 'specter':
      return readSpecter(parseJson(text), network);
    case 'caravan':
      return readCaravan(parseJson(text), network);
  }
}

const WRITERS: Readonly<Record<WalletFileFormat, (wallet: WalletForExport) => WalletFile>> = {
  descriptor: writeDescriptorFile,
  bsms: writeBsms,
  coldcard: writeColdcard,
  specter: writeSpecter,
  caravan: writeCaravan,
};

/** The wallet as a file of `format`; `export_unsupported` when that format cannot describe it. */
export const writeWalletFile = (format: WalletFileFormat, wallet: WalletForExport): WalletFile => WRITERS[format](wallet);
