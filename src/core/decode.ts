/**
 * Transactions and scripts decoded the way Bitcoin Core's `decoderawtransaction` prints them,
 * with the older `reqSigs`/`addresses` members in each scriptPubKey (see API-DECISIONS).
 */
import { toHex } from './bytes.js';
import { classifyScript, type ScriptType } from './script-type.js';
import type { Network } from './network.js';
import { isCoinbase, parseTransaction, size, txid, vsize, weight, wtxid, type Transaction } from './tx.js';
import { isValidSignatureEncoding } from './signing/signature.js';
import { decodedValueBtc } from './amount.js';

const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_RETURN = 0x6a;
const MAX_SCRIPT_SIZE = 10_000;

/** Bitcoin Core's GetOpName for opcodes that are not data pushes. */
const OPCODE_NAMES: Record<number, string> = {
  0x4f: '-1', 0x50: 'OP_RESERVED', 0x61: 'OP_NOP', 0x62: 'OP_VER', 0x63: 'OP_IF', 0x64: 'OP_NOTIF', 0x65: 'OP_VERIF',
  0x66: 'OP_VERNOTIF', 0x67: 'OP_ELSE', 0x68: 'OP_ENDIF', 0x69: 'OP_VERIFY', 0x6a: 'OP_RETURN', 0x6b: 'OP_TOALTSTACK',
  0x6c: 'OP_FROMALTSTACK', 0x6d: 'OP_2DROP', 0x6e: 'OP_2DUP', 0x6f: 'OP_3DUP', 0x70: 'OP_2OVER', 0x71: 'OP_2ROT',
  0x72: 'OP_2SWAP', 0x73: 'OP_IFDUP', 0x74: 'OP_DEPTH', 0x75: 'OP_DROP', 0x76: 'OP_DUP', 0x77: 'OP_NIP', 0x78: 'OP_OVER',
  0x79: 'OP_PICK', 0x7a: 'OP_ROLL', 0x7b: 'OP_ROT', 0x7c: 'OP_SWAP', 0x7d: 'OP_TUCK', 0x7e: 'OP_CAT', 0x7f: 'OP_SUBSTR',
  0x80: 'OP_LEFT', 0x81: 'OP_RIGHT', 0x82: 'OP_SIZE', 0x83: 'OP_INVERT', 0x84: 'OP_AND', 0x85: 'OP_OR', 0x86: 'OP_XOR',
  0x87: 'OP_EQUAL', 0x88: 'OP_EQUALVERIFY', 0x89: 'OP_RESERVED1', 0x8a: 'OP_RESERVED2', 0x8b: 'OP_1ADD', 0x8c: 'OP_1SUB',
  0x8d: 'OP_2MUL', 0x8e: 'OP_2DIV', 0x8f: 'OP_NEGATE', 0x90: 'OP_ABS', 0x91: 'OP_NOT', 0x92: 'OP_0NOTEQUAL', 0x93: 'OP_ADD',
  0x94: 'OP_SUB', 0x95: 'OP_MUL', 0x96: 'OP_DIV', 0x97: 'OP_MOD', 0x98: 'OP_LSHIFT', 0x99: 'OP_RSHIFT', 0x9a: 'OP_BOOLAND',
  0x9b: 'OP_BOOLOR', 0x9c: 'OP_NUMEQUAL', 0x9d: 'OP_NUMEQUALVERIFY', 0x9e: 'OP_NUMNOTEQUAL', 0x9f: 'OP_LESSTHAN',
  0xa0: 'OP_GREATERTHAN', 0xa1: 'OP_LESSTHANOREQUAL', 0xa2: 'OP_GREATERTHANOREQUAL', 0xa3: 'OP_MIN', 0xa4: 'OP_MAX',
  0xa5: 'OP_WITHIN', 0xa6: 'OP_RIPEMD160', 0xa7: 'OP_SHA1', 0xa8: 'OP_SHA256', 0xa9: 'OP_HASH160', 0xaa: 'OP_HASH256',
  0xab: 'OP_CODESEPARATOR', 0xac: 'OP_CHECKSIG', 0xad: 'OP_CHECKSIGVERIFY', 0xae: 'OP_CHECKMULTISIG',
  0xaf: 'OP_CHECKMULTISIGVERIFY', 0xb0: 'OP_NOP1', 0xb1: 'OP_CHECKLOCKTIMEVERIFY', 0xb2: 'OP_CHECKSEQUENCEVERIFY',
  0xb3: 'OP_NOP4', 0xb4: 'OP_NOP5', 0xb5: 'OP_NOP6', 0xb6: 'OP_NOP7', 0xb7: 'OP_NOP8', 0xb8: 'OP_NOP9', 0xb9: 'OP_NOP10',
  0xba: 'OP_CHECKSIGADD', 0xff: 'OP_INVALIDOPCODE',
};

const SIGHASH_NAMES: Record<number, string> = {
  0x01: 'ALL', 0x02: 'NONE', 0x03: 'SINGLE', 0x81: 'ALL|ANYONECANPAY', 0x82: 'NONE|ANYONECANPAY', 0x83: 'SINGLE|ANYONECANPAY',
};

/** Core's SighashToStr: the name of a sighash type, or '' when it has none. */
export function sighashName(type: number): string {
  if (type === 0) return 'DEFAULT';
  return SIGHASH_NAMES[type] ?? '';
}

export interface ScriptOp {
  opcode: number;
  /** The pushed bytes for push opcodes (0x00..0x4e). */
  data?: Uint8Array;
}

/** Splits a script into operations; `complete` is false when a push runs past the end (Core prints `[error]`). */
export function parseScriptOps(script: Uint8Array): { ops: ScriptOp[]; complete: boolean } {
  const ops: ScriptOp[] = [];
  let i = 0;
  while (i < script.length) {
    const opcode = script[i++]!;
    if (opcode > OP_PUSHDATA4) {
      ops.push({ opcode });
      continue;
    }
    let length = opcode;
    const lengthBytes = opcode === OP_PUSHDATA1 ? 1 : opcode === OP_PUSHDATA2 ? 2 : opcode === OP_PUSHDATA4 ? 4 : 0;
    if (lengthBytes > 0) {
      if (i + lengthBytes > script.length) return { ops, complete: false };
      length = 0;
      for (let b = lengthBytes - 1; b >= 0; b--) length = length * 256 + script[i + b]!;
      i += lengthBytes;
    }
    if (i + length > script.length) return { ops, complete: false };
    ops.push({ opcode, data: script.subarray(i, i + length) });
    i += length;
  }
  return { ops, complete: true };
}

/** CScriptNum of at most 4 bytes, little-endian sign-magnitude, as Core prints small pushes. */
function scriptNum(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let value = 0;
  for (let i = 0; i < bytes.length; i++) value += bytes[i]! * 2 ** (8 * i);
  const last = bytes[bytes.length - 1]!;
  if (last & 0x80) return -(value - 0x80 * 2 ** (8 * (bytes.length - 1)));
  return value;
}

/** Core's ScriptToAsmStr; `decodeSighash` as for scriptSigs (signatures shown with `[ALL]` etc.). */
export function scriptToAsm(script: Uint8Array, decodeSighash = false): string {
  const { ops, complete } = parseScriptOps(script);
  const unspendable = (script.length > 0 && script[0] === OP_RETURN) || script.length > MAX_SCRIPT_SIZE;
  const parts: string[] = [];
  for (const op of ops) {
    if (op.data === undefined) {
      const n = op.opcode;
      parts.push(n >= 0x51 && n <= 0x60 ? String(n - 0x50) : (OPCODE_NAMES[n] ?? 'OP_UNKNOWN'));
    } else if (op.data.length <= 4) {
      parts.push(String(scriptNum(op.data)));
    } else if (decodeSighash && !unspendable && isStrictSignature(op.data)) {
      const name = SIGHASH_NAMES[op.data[op.data.length - 1]!]!;
      parts.push(`${toHex(op.data.subarray(0, op.data.length - 1))}[${name}]`);
    } else {
      parts.push(toHex(op.data));
    }
  }
  if (!complete) parts.push('[error]');
  return parts.join(' ');
}

/** CheckSignatureEncoding with STRICTENC: strict DER plus a defined sighash type. */
function isStrictSignature(sig: Uint8Array): boolean {
  if (!isValidSignatureEncoding(sig)) return false;
  const type = sig[sig.length - 1]! & ~0x80;
  return type >= 1 && type <= 3;
}

export interface DecodedScriptPubKey {
  asm: string;
  hex: string;
  reqSigs?: number;
  type: ScriptType;
  addresses?: string[];
}

export function decodeScriptPubKey(script: Uint8Array, network: Network): DecodedScriptPubKey {
  const info = classifyScript(script, network);
  const decoded: DecodedScriptPubKey = { asm: scriptToAsm(script), hex: toHex(script) } as DecodedScriptPubKey;
  if (info.reqSigs !== undefined) decoded.reqSigs = info.reqSigs;
  decoded.type = info.type;
  if (info.addresses) decoded.addresses = info.addresses;
  return decoded;
}

export type DecodedInput =
  | { coinbase: string; txinwitness?: string[]; sequence: number }
  | { txid: string; vout: number; scriptSig: { asm: string; hex: string }; txinwitness?: string[]; sequence: number };

export interface DecodedOutput {
  value: number;
  n: number;
  scriptPubKey: DecodedScriptPubKey;
}

export interface DecodedTransaction {
  txid: string;
  hash: string;
  version: number;
  size: number;
  vsize: number;
  weight: number;
  locktime: number;
  vin: DecodedInput[];
  vout: DecodedOutput[];
}

/** Bitcoin Core's `decoderawtransaction` of a transaction (or its hex), with `reqSigs`/`addresses`. */
export function decodeTransaction(input: Transaction | Uint8Array | string, network: Network): DecodedTransaction {
  const tx = input instanceof Uint8Array || typeof input === 'string' ? parseTransaction(input) : input;
  const coinbase = isCoinbase(tx);
  const vin: DecodedInput[] = tx.inputs.map((i) => {
    const witness = i.witness.length > 0 ? { txinwitness: i.witness.map(toHex) } : {};
    if (coinbase) return { coinbase: toHex(i.scriptSig), ...witness, sequence: i.sequence };
    return {
      txid: i.txid,
      vout: i.vout,
      scriptSig: { asm: scriptToAsm(i.scriptSig, true), hex: toHex(i.scriptSig) },
      ...witness,
      sequence: i.sequence,
    };
  });
  const vout = tx.outputs.map((o, n) => ({ value: decodedValueBtc(o.value), n, scriptPubKey: decodeScriptPubKey(o.script, network) }));
  return {
    txid: txid(tx),
    hash: wtxid(tx),
    version: tx.version >>> 0,
    size: size(tx),
    vsize: vsize(tx),
    weight: weight(tx),
    locktime: tx.locktime,
    vin,
    vout,
  };
}
