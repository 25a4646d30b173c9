/**
 * Wallet setup files of other tools (output descriptors, BIP129 BSMS, Coldcard, Specter, Caravan):
 * the shapes shared by their readers and writers.
 */
import type { WalletDescriptors } from '../descriptor/index.js';
import { CoreError } from '../errors.js';
import type { Network } from '../network.js';
import { textProblem } from '../text.js';

export const WALLET_FILE_FORMATS = ['descriptor', 'bsms', 'coldcard', 'specter', 'caravan'] as const;
export type WalletFileFormat = (typeof WALLET_FILE_FORMATS)[number];

export const isWalletFileFormat = (text: unknown): text is WalletFileFormat =>
  typeof text === 'string' && (WALLET_FILE_FORMATS as readonly string[]).includes(text);

/**
 * A wallet file that cannot be read or written. Codes: `invalid_wallet_file` (malformed),
 * `unknown_wallet_file` (no format recognised), `wrong_network`, `invalid_threshold`, `repeated_key`,
 * `address_mismatch` (BSMS first address), `export_unsupported` (the wallet has no form in that format),
 * and the descriptor codes of the descriptor parser.
 */
export class WalletFileError extends CoreError {}

export const fileError = (message: string, code = 'invalid_wallet_file'): WalletFileError => new WalletFileError(code, message);

/** A name or label the file gives; refused, naming `field`, when it holds what no name may (core/text.ts). */
export function fileText(text: string, field: string): string {
  const problem = textProblem(text);
  if (problem) throw fileError(`${field} ${problem}`);
  return text;
}

/** What a wallet file says: the wallet's descriptors and, where the file has them, its name, key labels and birthday. */
export interface WalletSetup {
  readonly format: WalletFileFormat;
  readonly descriptors: WalletDescriptors;
  readonly name?: string;
  /** Label per key, in the order of `descriptors.info.keys`; undefined where the file has none. */
  readonly keyLabels: readonly (string | undefined)[];
  /** Block height to scan from. */
  readonly birthday?: number;
}

/** What a writer needs of a wallet. */
export interface WalletForExport {
  readonly name: string;
  readonly network: Network;
  readonly receiveDescriptor: string;
  readonly changeDescriptor: string;
  /** Label per key, in descriptor order ('' for none). */
  readonly keyLabels: readonly string[];
  readonly birthday: number;
}

export interface WalletFile {
  readonly text: string;
  readonly contentType: string;
  /** File name extension, without the dot. */
  readonly extension: string;
}
