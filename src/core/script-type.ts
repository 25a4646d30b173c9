/**
 * Classification of scriptPubKeys with Bitcoin Core's type names, and the `reqSigs`/`addresses`
 * members older Core versions printed (which the service's decoded transactions keep).
 */
import { encodeAddress, witnessProgram } from './address.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { p2pkhScript } from './address.js';
import type { Network } from './network.js';

export type ScriptType =
  | 'pubkeyhash'
  | 'scripthash'
  | 'witness_v0_keyhash'
  | 'witness_v0_scripthash'
  | 'witness_v1_taproot'
  | 'multisig'
  | 'pubkey'
  | 'nulldata'
  | 'witness_unknown'
  | 'anchor'
  | 'nonstandard';

export interface ScriptInfo {
  type: ScriptType;
  /** Present where Core's old decoding had them: address-bearing, pubkey and multisig scripts. */
  reqSigs?: number;
  addresses?: string[];
}

const OP_RETURN = 0x6a;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_PUSHDATA4 = 0x4e;

export const hash160 = (data: Uint8Array): Uint8Array => ripemd160(sha256(data));

/** Core's CPubKey::ValidSize: the length its first byte announces (hybrid 06/07 keys included). */
const isPubkey = (k: Uint8Array) =>
  (k.length === 33 && (k[0] === 2 || k[0] === 3)) || (k.length === 65 && (k[0] === 4 || k[0] === 6 || k[0] === 7));

/** Bare multisig: OP_m <pubkey>... OP_n OP_CHECKMULTISIG with 1 <= m <= n <= 16. */
export function parseBareMultisig(s: Uint8Array): { m: number; keys: Uint8Array[] } | undefined {
  if (s.length < 3 || s[s.length - 1] !== OP_CHECKMULTISIG) return undefined;
  const mOp = s[0]!;
  const nOp = s[s.length - 2]!;
  if (mOp < OP_1 || mOp > OP_16 || nOp < OP_1 || nOp > OP_16) return undefined;
  const m = mOp - OP_1 + 1;
  const n = nOp - OP_1 + 1;
  const keys: Uint8Array[] = [];
  let i = 1;
  while (i < s.length - 2) {
    const len = s[i]!;
    if (len !== 33 && len !== 65) return undefined;
    const key = s.subarray(i + 1, i + 1 + len);
    if (key.length !== len || !isPubkey(key)) return undefined;
    keys.push(key);
    i += 1 + len;
  }
  if (i !== s.length - 2 || keys.length !== n || m > n) return undefined;
  return { m, keys };
}

/** OP_RETURN followed by push-only data. */
function isNullData(s: Uint8Array): boolean {
  if (s.length < 1 || s[0] !== OP_RETURN) return false;
  let i = 1;
  while (i < s.length) {
    const op = s[i]!;
    if (op > OP_16) return false;
    if (op >= 1 && op < 0x4c) i += 1 + op;
    else if (op === 0x4c) i += 2 + (s[i + 1] ?? 0);
    else if (op === 0x4d) i += 3 + ((s[i + 1] ?? 0) | ((s[i + 2] ?? 0) << 8));
    else if (op === OP_PUSHDATA4) return false;
    else i += 1;
  }
  return i === s.length;
}

export function classifyScript(script: Uint8Array, network: Network): ScriptInfo {
  const single = (type: ScriptType): ScriptInfo => ({ type, reqSigs: 1, addresses: [encodeAddress(script, network)!] });
  const witness = witnessProgram(script);
  if (witness) {
    const { version, program } = witness;
    if (version === 0 && program.length === 20) return single('witness_v0_keyhash');
    if (version === 0 && program.length === 32) return single('witness_v0_scripthash');
    if (version === 1 && program.length === 32) return single('witness_v1_taproot');
    if (version === 1 && program.length === 2 && program[0] === 0x4e && program[1] === 0x73) return single('anchor');
    if (version !== 0) return single('witness_unknown');
    return { type: 'nonstandard' };
  }
  const address = encodeAddress(script, network);
  if (address) return { type: script[0] === 0xa9 ? 'scripthash' : 'pubkeyhash', reqSigs: 1, addresses: [address] };
  if ((script.length === 35 || script.length === 67) && script[0] === script.length - 2 && script[script.length - 1] === OP_CHECKSIG) {
    const key = script.subarray(1, script.length - 1);
    if (isPubkey(key)) return { type: 'pubkey', reqSigs: 1, addresses: [encodeAddress(p2pkhScript(hash160(key)), network)!] };
  }
  const multisig = parseBareMultisig(script);
  if (multisig) {
    return {
      type: 'multisig',
      reqSigs: multisig.m,
      addresses: multisig.keys.map((k) => encodeAddress(p2pkhScript(hash160(k)), network)!),
    };
  }
  if (isNullData(script)) return { type: 'nulldata' };
  return { type: 'nonstandard' };
}
