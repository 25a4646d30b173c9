/**
 * Caravan's wallet configuration JSON: `name`, `addressType` (P2SH, P2SH-P2WSH, P2WSH), `network`,
 * `quorum` {requiredSigners, totalSigners}, `extendedPublicKeys` [{name, bip32Path, xpub, xfp}],
 * `startingAddressIndex`. Caravan builds sorted multisig (BIP67) only.
 */
import { formatPathStep, parsePath } from '../keys/path.js';
import { encodeExtendedPublicKey } from '../keys/extended-key.js';
import type { Network, NetworkName } from '../network.js';
import { accountLayout, descriptorsFromTexts, pathWithApostrophes } from './setup.js';
import { fileError, fileText, WalletFileError, type WalletFile, type WalletForExport, type WalletSetup } from './types.js';
import { quoteInput } from '../text.js';

const ADDRESS_TYPES: Readonly<Record<string, string>> = { P2SH: 'sh', 'P2SH-P2WSH': 'sh-wsh', P2WSH: 'wsh' };
const TYPE_NAMES: Readonly<Record<string, string>> = { 'sh-sortedmulti': 'P2SH', 'sh-wsh-sortedmulti': 'P2SH-P2WSH', 'wsh-sortedmulti': 'P2WSH' };
/** Caravan's network names and the service networks each stands for. */
const NETWORKS_OF: Readonly<Record<string, readonly NetworkName[]>> = {
  mainnet: ['mainnet'],
  testnet: ['testnet', 'testnet4'],
  regtest: ['regtest'],
  signet: ['signet'],
};
const CARAVAN_NETWORK: Readonly<Record<NetworkName, string>> = { mainnet: 'mainnet', testnet: 'testnet', testnet4: 'testnet', signet: 'signet', regtest: 'regtest' };

const wrap = (format: string, body: string): string => (format === 'sh-wsh' ? `sh(wsh(${body}))` : `${format}(${body})`);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function keyOf(entry: unknown, i: number): { key: string; label?: string } {
  const { name, bip32Path, xpub, xfp } = (entry ?? {}) as Record<string, unknown>;
  const where = `extendedPublicKeys[${i}]`;
  if (typeof xpub !== 'string') throw fileError(`${where}: "xpub" text is required`);
  if (typeof xfp !== 'string' || !/^[0-9a-fA-F]{8}$/.test(xfp)) throw fileError(`${where}: "xfp" must be 8 hex digits (the key's master fingerprint)`);
  if (typeof bip32Path !== 'string') throw fileError(`${where}: "bip32Path" is required`);
  let path: string;
  try {
    path = parsePath(bip32Path).map((s) => `/${formatPathStep(s)}`).join('');
  } catch {
    throw fileError(`${where}: invalid bip32Path ${quoteInput(bip32Path, 40)}`);
  }
  if (bip32Path === 'm') path = '';
  return { key: `[${xfp.toLowerCase()}${path}]${xpub}/<0;1>/*`, ...(typeof name === 'string' && name !== '' ? { label: fileText(name, `${where}.name`) } : {}) };
}

export function readCaravan(json: Record<string, unknown>, network: Network): WalletSetup {
  const { name, addressType, network: fileNetwork, quorum, extendedPublicKeys, startingAddressIndex } = json;
  const format = typeof addressType === 'string' ? ADDRESS_TYPES[addressType.toUpperCase()] : undefined;
  if (typeof name === 'string') fileText(name, '"name"');
  if (!format) throw fileError('"addressType" must be P2SH, P2SH-P2WSH or P2WSH');
  if (typeof fileNetwork !== 'string' || !NETWORKS_OF[fileNetwork]) throw fileError('"network" must be mainnet, testnet, regtest or signet');
  if (!NETWORKS_OF[fileNetwork]!.includes(network.name)) {
    throw new WalletFileError('wrong_network', `The file is for ${fileNetwork}; this service runs on ${network.name}`);
  }
  if (startingAddressIndex !== undefined && startingAddressIndex !== 0) {
    throw fileError('Only startingAddressIndex 0 is supported: the service derives addresses from index 0');
  }
  if (!Array.isArray(extendedPublicKeys) || extendedPublicKeys.length === 0) throw fileError('"extendedPublicKeys" must list the keys');
  const { requiredSigners, totalSigners } = (quorum ?? {}) as Record<string, unknown>;
  if (!isCount(requiredSigners) || !isCount(totalSigners)) throw fileError('"quorum" needs integer requiredSigners and totalSigners');
  if (totalSigners !== extendedPublicKeys.length) {
    throw new WalletFileError('invalid_threshold', `quorum.totalSigners is ${totalSigners}, the file lists ${extendedPublicKeys.length} keys`);
  }
  if (requiredSigners < 1 || requiredSigners > totalSigners) {
    throw new WalletFileError('invalid_threshold', `quorum.requiredSigners ${requiredSigners} must be between 1 and the number of keys (${totalSigners})`);
  }
  const keys = extendedPublicKeys.map(keyOf);
  const descriptors = descriptorsFromTexts([wrap(format, `sortedmulti(${requiredSigners},${keys.map((k) => k.key).join(',')})`)], network);
  return {
    format: 'caravan',
    descriptors,
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
    keyLabels: keys.map((k) => k.label),
  };
}

export function writeCaravan(wallet: WalletForExport): WalletFile {
  const descriptor = accountLayout(wallet.receiveDescriptor, wallet.changeDescriptor, wallet.network, 'Caravan');
  const addressType = TYPE_NAMES[descriptor.type];
  if (!addressType) throw fileError('Caravan wallet files describe sorted multisig wallets (sortedmulti) only', 'export_unsupported');
  const extendedPublicKeys = descriptor.keys.map((key, i) => {
    if (key.kind !== 'xpub' || !key.origin) throw fileError('Caravan needs every key with its origin [fingerprint/path]', 'export_unsupported');
    return {
      name: wallet.keyLabels[i] || `Key ${i + 1}`,
      bip32Path: pathWithApostrophes(['m', ...key.origin.path.map(formatPathStep)].join('/')),
      xpub: encodeExtendedPublicKey(key.xpub, wallet.network),
      xfp: key.origin.fingerprint,
      method: 'text',
    };
  });
  const body = {
    name: wallet.name,
    addressType,
    network: CARAVAN_NETWORK[wallet.network.name],
    client: { type: 'public' },
    quorum: { requiredSigners: descriptor.threshold, totalSigners: descriptor.keys.length },
    extendedPublicKeys,
    startingAddressIndex: 0,
  };
  return { text: `${JSON.stringify(body, null, 2)}\n`, contentType: 'application/json', extension: 'json' };
}
