/**
 * Coldcard's multisig setup text (firmware shared/multisig.py `from_simple_text`/`render_export`):
 * `Name:`, `Policy: M of N`, `Format:` (P2SH default, P2WSH, P2SH-P2WSH), `Derivation:` lines that apply to
 * the keys after them, and one `XFP: xpub` line per key. Coldcard builds sorted multisig (BIP67) only.
 */
import { encodeExtendedPublicKey } from '../keys/extended-key.js';
import { parsePath, formatPathStep } from '../keys/path.js';
import type { Network } from '../network.js';
import { accountLayout, descriptorsFromTexts, pathWithApostrophes } from './setup.js';
import { fileError, fileText, WalletFileError, type WalletFile, type WalletForExport, type WalletSetup } from './types.js';
import { quoteInput } from '../text.js';

const FORMATS: Readonly<Record<string, string>> = { p2sh: 'sh', p2wsh: 'wsh', 'p2sh-p2wsh': 'sh-wsh', 'p2wsh-p2sh': 'sh-wsh' };
const FORMAT_NAMES: Readonly<Record<string, string>> = { 'sh-sortedmulti': 'P2SH', 'wsh-sortedmulti': 'P2WSH', 'sh-wsh-sortedmulti': 'P2SH-P2WSH' };

const wrap = (format: string, body: string): string => (format === 'sh-wsh' ? `sh(wsh(${body}))` : `${format}(${body})`);

/** A line without its trailing comment (Coldcard keeps `#` followed by a digit). */
const withoutComment = (line: string): string => {
  const at = line.search(/#(?!\d)/);
  return (at === -1 ? line : line.slice(0, at)).trim();
};

export function readColdcard(text: string, network: Network): WalletSetup {
  let name: string | undefined;
  let policy: { m: number; n: number } | undefined;
  let format = 'sh';
  let derivation: string | undefined;
  const keys: string[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim().startsWith('#')) continue;
    const line = withoutComment(raw);
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon < 0) throw fileError(`Line ${i + 1}: expected "label: value"`);
    const label = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (label === 'name') name = fileText(value, `Line ${i + 1}: the name`);
    else if (label === 'policy') {
      const match = /(\d+)\D+(\d+)/.exec(value);
      if (!match) throw fileError(`Line ${i + 1}: a policy reads "M of N"`);
      policy = { m: Number(match[1]), n: Number(match[2]) };
    } else if (label === 'format') {
      const found = FORMATS[value.toLowerCase()];
      if (!found) throw fileError(`Line ${i + 1}: unknown format ${quoteInput(value, 20)}; expected P2SH, P2WSH or P2SH-P2WSH`);
      format = found;
    } else if (label === 'derivation') {
      try {
        derivation = parsePath(value).map(formatPathStep).map((s) => `/${s}`).join('');
      } catch {
        throw fileError(`Line ${i + 1}: invalid derivation ${quoteInput(value, 40)}`);
      }
    } else if (/^[0-9a-f]{8}$/.test(label)) {
      if (derivation === undefined) throw fileError(`Line ${i + 1}: a "Derivation:" line must come before the keys`);
      keys.push(`[${label}${derivation}]${value}/<0;1>/*`);
    } else throw fileError(`Line ${i + 1}: unknown field ${quoteInput(label, 20)}`);
  }
  if (keys.length === 0) throw fileError('No "XFP: xpub" key lines');
  const { m, n } = policy ?? { m: keys.length, n: keys.length };
  if (n !== keys.length) throw new WalletFileError('invalid_threshold', `Policy says ${n} keys, the file lists ${keys.length}`);
  if (m < 1 || m > n) throw new WalletFileError('invalid_threshold', `Threshold ${m} must be between 1 and the number of keys (${n})`);
  const descriptors = descriptorsFromTexts([wrap(format, `sortedmulti(${m},${keys.join(',')})`)], network);
  return { format: 'coldcard', descriptors, ...(name ? { name } : {}), keyLabels: [] };
}

/** Coldcard names are 1 to 20 printable ASCII characters. */
const coldcardName = (name: string): string => name.replace(/[^\x20-\x7e]/g, '-').trim().slice(0, 20) || 'wallet';

export function writeColdcard(wallet: WalletForExport): WalletFile {
  const descriptor = accountLayout(wallet.receiveDescriptor, wallet.changeDescriptor, wallet.network, 'Coldcard');
  const formatName = FORMAT_NAMES[descriptor.type];
  if (!formatName) throw fileError('Coldcard setup files describe sorted multisig wallets (sortedmulti) only', 'export_unsupported');
  const lines = [
    '# Coldcard Multisig setup file (exported from the wallet coordination service)',
    '#',
    `Name: ${coldcardName(wallet.name)}`,
    `Policy: ${descriptor.threshold} of ${descriptor.keys.length}`,
    `Format: ${formatName}`,
  ];
  let last: string | undefined;
  for (const key of descriptor.keys) {
    if (key.kind !== 'xpub' || !key.origin) throw fileError('Coldcard needs every key with its origin [fingerprint/path]', 'export_unsupported');
    const path = pathWithApostrophes(['m', ...key.origin.path.map(formatPathStep)].join('/'));
    if (path !== last) lines.push('', `Derivation: ${path}`, '');
    last = path;
    lines.push(`${key.origin.fingerprint.toUpperCase()}: ${encodeExtendedPublicKey(key.xpub, wallet.network)}`);
  }
  return { text: lines.join('\n') + '\n', contentType: 'text/plain; charset=utf-8', extension: 'txt' };
}
