/**
 * BIP129 BSMS 1.0 descriptor record (unencrypted): version line, descriptor or descriptor template
 * (`/**` for `/<0;1>/*`), path restrictions, first address. The first address must be the one the
 * descriptor derives.
 */
import { formatDescriptor, stripChecksum } from '../descriptor/index.js';
import type { Network } from '../network.js';
import { descriptorsFromTexts, firstAddress, multipathOf, withApostrophes } from './setup.js';
import { fileError, WalletFileError, type WalletFile, type WalletForExport, type WalletSetup } from './types.js';
import { hidePrivateKeys } from '../keys/private-key.js';
import { quoteInput } from '../text.js';

const VERSION = 'BSMS 1.0';
const NO_RESTRICTIONS = 'No path restrictions';
const WALLET_RESTRICTIONS = '/0/*,/1/*';

export function readBsms(text: string, network: Network): WalletSetup {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  if (lines[0] !== VERSION) throw fileError(`A BSMS descriptor record starts with "${VERSION}"`);
  if (lines.length !== 4) throw fileError('A BSMS descriptor record has four lines: version, descriptor, path restrictions, first address');
  const [, descriptorText, restrictions, address] = lines as [string, string, string, string];
  const restrictionList = restrictions.replace(/\s+/g, '');
  if (restrictions !== NO_RESTRICTIONS && restrictionList !== WALLET_RESTRICTIONS) {
    throw fileError(`Path restrictions ${quoteInput(restrictions, 60)} are not supported; expected ${WALLET_RESTRICTIONS} or "${NO_RESTRICTIONS}"`);
  }
  const template = descriptorText.includes('/**');
  if (template && restrictions === NO_RESTRICTIONS) throw fileError('A descriptor template (/**) needs the path restrictions /0/*,/1/*');
  const expanded = template ? stripChecksum(descriptorText).body.replaceAll('/**', '/<0;1>/*') : descriptorText;
  const descriptors = descriptorsFromTexts([expanded], network);
  const derived = firstAddress(descriptors.receive, network);
  if (derived !== address) {
    throw new WalletFileError('address_mismatch', `The record's first address ${hidePrivateKeys(address).slice(0, 100)} is not the descriptor's first address ${derived}`);
  }
  return { format: 'bsms', descriptors, keyLabels: [] };
}

/** The descriptor template form of BIP129's examples (`/**`, `'` markers, no checksum). */
export function writeBsms(wallet: WalletForExport): WalletFile {
  const multipath = formatDescriptor(multipathOf(wallet.receiveDescriptor, wallet.changeDescriptor, wallet.network));
  const template = withApostrophes(stripChecksum(multipath).body).replaceAll('/<0;1>/*', '/**');
  if (template.includes('<')) throw fileError('BSMS templates need receive /0/* and change /1/* branches', 'export_unsupported');
  const text = [VERSION, template, WALLET_RESTRICTIONS, firstAddress(wallet.receiveDescriptor, wallet.network)].join('\n') + '\n';
  return { text, contentType: 'text/plain; charset=utf-8', extension: 'bsms' };
}
