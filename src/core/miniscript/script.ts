/** The Bitcoin Script of a miniscript tree, and its length without building it. */
import { concatBytes } from '../bytes.js';
import { hash160 } from '../script-type.js';
import type { MiniscriptNode, ScriptContext } from './node.js';
import { has, type TypeBits } from './types.js';

const OP = {
  0: 0x00, 1: 0x51, TOALTSTACK: 0x6b, FROMALTSTACK: 0x6c, SWAP: 0x7c, CHECKSIG: 0xac, CHECKSIGVERIFY: 0xad,
  CHECKMULTISIG: 0xae, CHECKMULTISIGVERIFY: 0xaf, DUP: 0x76, IF: 0x63, NOTIF: 0x64, ELSE: 0x67, ENDIF: 0x68,
  VERIFY: 0x69, SIZE: 0x82, ZERONOTEQUAL: 0x92, EQUAL: 0x87, EQUALVERIFY: 0x88, NUMEQUAL: 0x9c, NUMEQUALVERIFY: 0x9d,
  BOOLAND: 0x9a, BOOLOR: 0x9b, IFDUP: 0x73, ADD: 0x93, HASH160: 0xa9, CSV: 0xb2, CLTV: 0xb1, CHECKSIGADD: 0xba,
} as const;
const HASH_OP = { sha256: 0xa8, hash256: 0xaa, ripemd160: 0xa6, hash160: 0xa9 } as const;

/** Minimal push of a script number (CScriptNum), as `<n>` in Core's BuildScript. */
export function pushNumber(n: number): Uint8Array {
  if (n === 0) return Uint8Array.of(OP[0]);
  if (n >= 1 && n <= 16) return Uint8Array.of(0x50 + n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.push(v % 256);
  if (bytes[bytes.length - 1]! & 0x80) bytes.push(0);
  return Uint8Array.of(bytes.length, ...bytes);
}
const pushData = (data: Uint8Array) => concatBytes(Uint8Array.of(data.length), data);

/** Key bytes in the script: 33-byte compressed for wsh, 32-byte x-only for tapscript. */
export type KeyBytes = (key: string) => Uint8Array;

/** Build the script; `types` (from typeTree) tells which `v:` can fold into a VERIFY opcode. */
export function buildScript(root: MiniscriptNode, keyBytes: KeyBytes, types: Map<MiniscriptNode, TypeBits>): Uint8Array {
  const build = (n: MiniscriptNode): Uint8Array => {
    const s = n.subs.map(build);
    const [x, y, z] = s;
    const b = (...parts: (Uint8Array | number)[]) => concatBytes(...parts.map((p) => (typeof p === 'number' ? Uint8Array.of(p) : p)));
    switch (n.fragment) {
      case '0': return b(OP[0]);
      case '1': return b(OP[1]);
      case 'pk_k': return pushData(keyBytes(n.keys[0]!));
      case 'pk_h': return b(OP.DUP, OP.HASH160, pushData(hash160(keyBytes(n.keys[0]!))), OP.EQUALVERIFY);
      case 'older': return b(pushNumber(n.k), OP.CSV);
      case 'after': return b(pushNumber(n.k), OP.CLTV);
      case 'sha256': case 'hash256': case 'ripemd160': case 'hash160':
        return b(OP.SIZE, pushNumber(32), OP.EQUALVERIFY, HASH_OP[n.fragment], pushData(n.hash!), OP.EQUAL);
      case 'a': return b(OP.TOALTSTACK, x!, OP.FROMALTSTACK);
      case 's': return b(OP.SWAP, x!);
      case 'c': return b(x!, OP.CHECKSIG);
      case 'd': return b(OP.DUP, OP.IF, x!, OP.ENDIF);
      case 'v': {
        if (has(types.get(n.subs[0]!)!, 'x')) return b(x!, OP.VERIFY);
        // The sub ends in an opcode that has a VERIFY form: swap it in (CHECKSIG -> CHECKSIGVERIFY etc.).
        const last = x![x!.length - 1]!;
        const verify: Record<number, number> = { [OP.CHECKSIG]: OP.CHECKSIGVERIFY, [OP.CHECKMULTISIG]: OP.CHECKMULTISIGVERIFY, [OP.EQUAL]: OP.EQUALVERIFY, [OP.NUMEQUAL]: OP.NUMEQUALVERIFY };
        return b(x!.subarray(0, -1), verify[last] ?? last);
      }
      case 'j': return b(OP.SIZE, OP.ZERONOTEQUAL, OP.IF, x!, OP.ENDIF);
      case 'n': return b(x!, OP.ZERONOTEQUAL);
      case 'and_v': return b(x!, y!);
      case 'and_b': return b(x!, y!, OP.BOOLAND);
      case 'or_b': return b(x!, y!, OP.BOOLOR);
      case 'or_c': return b(x!, OP.NOTIF, y!, OP.ENDIF);
      case 'or_d': return b(x!, OP.IFDUP, OP.NOTIF, y!, OP.ENDIF);
      case 'or_i': return b(OP.IF, x!, OP.ELSE, y!, OP.ENDIF);
      case 'andor': return b(x!, OP.NOTIF, z!, OP.ELSE, y!, OP.ENDIF);
      case 'thresh': return b(...s.flatMap((sub, i) => (i === 0 ? [sub] : [sub, OP.ADD])), pushNumber(n.k), OP.EQUAL);
      case 'multi': return b(pushNumber(n.k), ...n.keys.map((k) => pushData(keyBytes(k))), pushNumber(n.keys.length), OP.CHECKMULTISIG);
      case 'multi_a':
        return b(...n.keys.flatMap((k, i) => [pushData(keyBytes(k)), i === 0 ? OP.CHECKSIG : OP.CHECKSIGADD]), pushNumber(n.k), OP.NUMEQUAL);
    }
  };
  return build(root);
}

/** Script length from the tree alone (Core's ComputeScriptLen): keys are 33 bytes in wsh, 32 in tapscript. */
export function scriptSize(root: MiniscriptNode, ctx: ScriptContext, types: Map<MiniscriptNode, TypeBits>): number {
  const key = ctx === 'tapscript' ? 33 : 34;
  const size = (n: MiniscriptNode): number => {
    const sub = n.subs.reduce((sum, s) => sum + size(s), 0);
    switch (n.fragment) {
      case '0': case '1': return 1;
      case 'pk_k': return key;
      case 'pk_h': return 3 + 21;
      case 'older': case 'after': return 1 + pushNumber(n.k).length;
      case 'sha256': case 'hash256': return 4 + 2 + 33;
      case 'ripemd160': case 'hash160': return 4 + 2 + 21;
      case 'multi': return 1 + pushNumber(n.keys.length).length + pushNumber(n.k).length + 34 * n.keys.length;
      case 'multi_a': return (1 + 32 + 1) * n.keys.length + pushNumber(n.k).length + 1;
      case 'and_v': return sub;
      case 'v': return sub + (has(types.get(n.subs[0]!)!, 'x') ? 1 : 0);
      case 's': case 'c': case 'n': case 'and_b': case 'or_b': return sub + 1;
      case 'a': case 'or_c': return sub + 2;
      case 'd': case 'or_d': case 'or_i': case 'andor': return sub + 3;
      case 'j': return sub + 4;
      case 'thresh': return sub + n.subs.length - 1 + pushNumber(n.k).length + 1;
    }
  };
  return size(root);
}
