/**
 * Output descriptor text files: one multipath `<0;1>` descriptor, or a receive/change pair (checksums
 * optional). `#` comment lines and Sparrow's `Receive:`/`Change:` prefixes are skipped.
 */
import { formatDescriptor } from '../descriptor/index.js';
import type { Network } from '../network.js';
import { contentLines, descriptorsFromTexts, multipathOf } from './setup.js';
import type { WalletFile, WalletForExport, WalletSetup } from './types.js';

export function readDescriptorFile(text: string, network: Network): WalletSetup {
  const texts = contentLines(text).map((line) => line.replace(/^(receive|change)\s*:\s*/i, ''));
  const descriptors = descriptorsFromTexts(texts, network);
  return { format: 'descriptor', descriptors, keyLabels: [] };
}

/** One multipath descriptor line, which Bitcoin Core (importdescriptors), Sparrow and this service read. */
export function writeDescriptorFile(wallet: WalletForExport): WalletFile {
  const text = `${formatDescriptor(multipathOf(wallet.receiveDescriptor, wallet.changeDescriptor, wallet.network))}\n`;
  return { text, contentType: 'text/plain; charset=utf-8', extension: 'txt' };
}
