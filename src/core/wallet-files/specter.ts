/**
 * Specter Desktop's wallet export JSON (`Wallet.account_map`): `label`, `blockheight`, `descriptor` (the
 * receive descriptor; older exports give account keys without steps) and `devices` ({type, label}, one
 * per key in descriptor order).
 */
import type { Network } from '../network.js';
import { accountLayout, descriptorsFromTexts } from './setup.js';
import { fileError, fileText, type WalletFile, type WalletForExport, type WalletSetup } from './types.js';

export function readSpecter(json: Record<string, unknown>, network: Network): WalletSetup {
  const { label, blockheight, descriptor, devices } = json;
  if (typeof descriptor !== 'string') throw fileError('A Specter wallet file needs "descriptor" text');
  if (label !== undefined && typeof label !== 'string') throw fileError('"label" must be text');
  if (typeof label === 'string') fileText(label, '"label"');
  if (blockheight !== undefined && (typeof blockheight !== 'number' || !Number.isSafeInteger(blockheight) || blockheight < 0)) {
    throw fileError('"blockheight" must be a block height (integer >= 0)');
  }
  if (devices !== undefined && !Array.isArray(devices)) throw fileError('"devices" must be a list');
  const descriptors = descriptorsFromTexts([descriptor], network);
  const deviceLabels = ((devices as unknown[] | undefined) ?? []).map((d, i) => {
    const text = (d as { label?: unknown } | null)?.label;
    return typeof text === 'string' && text !== '' ? fileText(text, `devices[${i}].label`) : undefined;
  });
  // Devices name keys only when there is one per key (the order Specter writes them in).
  const keyLabels = deviceLabels.length === descriptors.info.keys.length ? deviceLabels : [];
  return {
    format: 'specter',
    descriptors,
    ...(typeof label === 'string' && label !== '' ? { name: label } : {}),
    keyLabels,
    ...(typeof blockheight === 'number' ? { birthday: blockheight } : {}),
  };
}

export function writeSpecter(wallet: WalletForExport): WalletFile {
  accountLayout(wallet.receiveDescriptor, wallet.changeDescriptor, wallet.network, 'Specter');
  const devices = wallet.keyLabels.map((label, i) => ({ type: 'other', label: label || `Key ${i + 1}` }));
  const body = { label: wallet.name, blockheight: wallet.birthday, descriptor: wallet.receiveDescriptor, devices };
  return { text: `${JSON.stringify(body, null, 2)}\n`, contentType: 'application/json', extension: 'json' };
}
