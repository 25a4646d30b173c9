/**
 * Addresses <-> scriptPubKeys: base58check (P2PKH, P2SH), bech32 (witness v0) and bech32m (v1+),
 * validated as BIP173/BIP350 require and against one network.
 */
import { base58check as base58checkFactory, bech32, bech32m } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from './bytes.js';
import { AddressError } from './errors.js';
import type { Network } from './network.js';

const base58check = base58checkFactory(sha256);

const OP_0 = 0x00;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_DUP = 0x76;
const OP_HASH160 = 0xa9;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_CHECKSIG = 0xac;

export const p2pkhScript = (hash160: Uint8Array): Uint8Array =>
  concatBytes(Uint8Array.of(OP_DUP, OP_HASH160, 20), hash160, Uint8Array.of(OP_EQUALVERIFY, OP_CHECKSIG));
export const p2shScript = (hash160: Uint8Array): Uint8Array =>
  concatBytes(Uint8Array.of(OP_HASH160, 20), hash160, Uint8Array.of(OP_EQUAL));
export const witnessScript = (version: number, program: Uint8Array): Uint8Array =>
  concatBytes(Uint8Array.of(version === 0 ? OP_0 : OP_1 + version - 1, program.length), program);

/** The witness version and program of a segwit scriptPubKey, or undefined for any other script. */
export function witnessProgram(script: Uint8Array): { version: number; program: Uint8Array } | undefined {
  if (script.length < 4 || script.length > 42) return undefined;
  const op = script[0]!;
  if (op !== OP_0 && (op < OP_1 || op > OP_16)) return undefined;
  if (script[1] !== script.length - 2) return undefined;
  return { version: op === OP_0 ? 0 : op - OP_1 + 1, program: script.subarray(2) };
}

const isP2pkh = (s: Uint8Array) =>
  s.length === 25 && s[0] === OP_DUP && s[1] === OP_HASH160 && s[2] === 20 && s[23] === OP_EQUALVERIFY && s[24] === OP_CHECKSIG;
const isP2sh = (s: Uint8Array) => s.length === 23 && s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL;

/** The address of a scriptPubKey on a network, or undefined if the script has no address form. */
export function encodeAddress(script: Uint8Array, network: Network): string | undefined {
  if (isP2pkh(script)) return base58check.encode(concatBytes(Uint8Array.of(network.pubKeyHash), script.subarray(3, 23)));
  if (isP2sh(script)) return base58check.encode(concatBytes(Uint8Array.of(network.scriptHash), script.subarray(2, 22)));
  const witness = witnessProgram(script);
  if (!witness) return undefined;
  const { version, program } = witness;
  if (version === 0 && program.length !== 20 && program.length !== 32) return undefined;
  const words = [version, ...bech32.toWords(program)];
  return (version === 0 ? bech32 : bech32m).encode(network.bech32, words, 90);
}

/**
 * The scriptPubKey an address pays to. Throws AddressError with code `invalid_address` for text that is
 * no address at all, and `wrong_network` for a valid address of another network.
 */
export function decodeAddress(address: string, network: Network): Uint8Array {
  if (typeof address !== 'string' || address.length === 0 || address.length > 90) {
    throw new AddressError('invalid_address', 'Invalid address');
  }
  const separator = address.lastIndexOf('1');
  const looksSegwit = separator > 0 && /^(bc|tb|bcrt)$/i.test(address.slice(0, separator));
  return looksSegwit ? decodeSegwit(address, network) : decodeBase58(address, network);
}

function decodeBase58(address: string, network: Network): Uint8Array {
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    throw new AddressError('invalid_address', 'Invalid address: bad base58 checksum or characters');
  }
  if (payload.length !== 21) throw new AddressError('invalid_address', 'Invalid address: wrong payload length');
  const version = payload[0]!;
  const hash = payload.subarray(1);
  if (version === network.pubKeyHash) return p2pkhScript(hash);
  if (version === network.scriptHash) return p2shScript(hash);
  if ([0x00, 0x05, 0x6f, 0xc4].includes(version)) {
    throw new AddressError('wrong_network', `Address is not for the ${network.name} network`);
  }
  throw new AddressError('invalid_address', 'Invalid address: unknown version byte');
}

function decodeSegwit(address: string, network: Network): Uint8Array {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) {
    throw new AddressError('invalid_address', 'Invalid address: mixed case');
  }
  const lower = address.toLowerCase();
  let decoded: { prefix: string; words: number[] } | undefined;
  let isBech32m = false;
  try {
    decoded = bech32.decode(lower as `${string}1${string}`, 90);
  } catch {
    try {
      decoded = bech32m.decode(lower as `${string}1${string}`, 90);
      isBech32m = true;
    } catch {
      throw new AddressError('invalid_address', 'Invalid address: bad bech32 checksum or characters');
    }
  }
  if (decoded.words.length < 1) throw new AddressError('invalid_address', 'Invalid address: empty data');
  const version = decoded.words[0]!;
  if (version > 16) throw new AddressError('invalid_address', 'Invalid address: witness version above 16');
  if ((version === 0) === isBech32m) {
    throw new AddressError('invalid_address', `Invalid address: witness version ${version} needs ${version === 0 ? 'bech32' : 'bech32m'}`);
  }
  let program: Uint8Array;
  try {
    program = (isBech32m ? bech32m : bech32).fromWords(decoded.words.slice(1));
  } catch {
    throw new AddressError('invalid_address', 'Invalid address: bad padding');
  }
  if (program.length < 2 || program.length > 40) throw new AddressError('invalid_address', 'Invalid address: witness program length');
  if (version === 0 && program.length !== 20 && program.length !== 32) {
    throw new AddressError('invalid_address', 'Invalid address: witness v0 program must be 20 or 32 bytes');
  }
  if (decoded.prefix !== network.bech32) {
    throw new AddressError('wrong_network', `Address is not for the ${network.name} network`);
  }
  return witnessScript(version, program);
}

/** Lower-cases bech32 addresses (which are case-insensitive) and leaves base58 ones alone. */
export function normalizeAddress(address: string, network: Network): string {
  const script = decodeAddress(address, network);
  return encodeAddress(script, network)!;
}
