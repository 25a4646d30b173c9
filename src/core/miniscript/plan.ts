/**
 * The spend plan of a miniscript descriptor (see `core/spend-plan.ts`): its spending paths with
 * key indexes into the descriptor's keys, and the largest input each path can need, script and
 * control block included. At one output, each path builds its final witness with the satisfier.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { base58check as base58checkFactory } from '@scure/base';
import { concatBytes, toHex } from '../bytes.js';
import { keysOf, type FinalScripts, type OutputSpendPath, type OutputSpendPlan, type SignatureOf, type SpendPath, type SpendPlan } from '../spend-plan.js';
import { NUMS_H } from './compile.js';
import type { MiniscriptDescriptor, MiniscriptOutput } from './descriptor.js';
import { MiniscriptError } from './errors.js';
import type { MiniscriptNode } from './node.js';
import { printMiniscript } from './parse.js';
import { spendingPaths } from './paths.js';
import { lockTimeMeets, satisfy, sequenceMeets } from './satisfy.js';

/** Witness item lengths of Bitcoin Core's watch-only estimates. */
export const SIGNATURE_BYTES = { ecdsa: 72, schnorr: 64 } as const;

/** Bytes of the P2SH-P2WSH scriptSig: one push of the 34-byte witness program. */
const SH_WSH_SCRIPT_SIG = 35;

const base58check = base58checkFactory(sha256);
const H_COMPRESSED = `02${NUMS_H}`;

/**
 * True when a key is BIP341's unspendable H (a taproot internal key with no key path): bare, or an extended key whose key
 * is H, as BIP-388 wallet policies and Liana write it (every key derived from it is as unspendable).
 */
export function isUnspendableKey(text: string): boolean {
  const key = text.replace(/^\[[^\]]*\]/, '').split('/')[0]!;
  if (key.toLowerCase() === NUMS_H) return true;
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(key);
  } catch {
    return false;
  }
  // version 4, depth 1, parent fingerprint 4, child number 4, chain code 32, then the 33-byte key
  return bytes.length === 78 && toHex(bytes.subarray(45)) === H_COMPRESSED;
}

/** The script with each key written as `@index` (as BIP388 wallet policies do): short and stable. */
function template(root: MiniscriptNode, keyTexts: readonly string[]): string {
  const map = (n: MiniscriptNode): MiniscriptNode => ({ ...n, keys: n.keys.map((k) => `@${keyTexts.indexOf(k)}`), subs: n.subs.map(map) });
  return printMiniscript(map(root));
}

/** Each path with the leaf it satisfies (undefined: the taproot key path). */
function planEntries(desc: MiniscriptDescriptor): { path: SpendPath; leaf?: number }[] {
  const entries: { path: SpendPath; leaf?: number }[] = [];
  const taproot = desc.kind === 'tr';
  if (taproot && !isUnspendableKey(desc.internalKey!)) {
    entries.push({ path: { name: 'key', signers: { k: 1, of: [0] }, scheme: 'schnorr', size: { scriptSig: 0, witness: [SIGNATURE_BYTES.schnorr] } } });
  }
  desc.leaves.forEach((leaf, leafIndex) => {
    const ctx = taproot ? 'tapscript' : 'wsh';
    const signature = taproot ? SIGNATURE_BYTES.schnorr : SIGNATURE_BYTES.ecdsa;
    const text = template(leaf.root, desc.keyTexts);
    const tail = taproot ? [leaf.facts.scriptSize, 33 + 32 * leaf.depth] : [leaf.facts.scriptSize];
    const found = spendingPaths(leaf.root, ctx, desc.keyTexts, { signature });
    // Paths without a lock first: the one a wallet normally takes.
    const locked = (p: (typeof found)[number]) => Number(p.sequence !== undefined || p.lockTime !== undefined);
    found.sort((a, b) => locked(a) - locked(b));
    found.forEach((p, i) => {
      entries.push({
        leaf: leafIndex,
        path: {
          name: found.length === 1 ? text : `${text}#${i + 1}`,
          signers: p.signers,
          scheme: taproot ? 'schnorr' : 'ecdsa',
          size: { scriptSig: desc.kind === 'sh-wsh' ? SH_WSH_SCRIPT_SIG : 0, witness: [...p.witness, ...tail] },
          ...(p.sequence !== undefined && { sequence: p.sequence }),
          ...(p.lockTime !== undefined && { lockTime: p.lockTime }),
          ...(p.needs.length > 0 && { needs: p.needs }),
        },
      });
    });
  });
  return entries;
}

export function miniscriptSpendPlan(desc: MiniscriptDescriptor): SpendPlan {
  return { segwit: true, keyCount: desc.keyTexts.length, paths: planEntries(desc).map((e) => e.path) };
}

/** The plan of one derived output: each path finalizes with Core's non-malleable satisfier. */
export function miniscriptOutputPlan(desc: MiniscriptDescriptor, output: MiniscriptOutput): OutputSpendPlan {
  const scriptSig = output.redeemScript ? concatBytes(Uint8Array.of(output.redeemScript.length), output.redeemScript) : new Uint8Array(0);
  const paths: OutputSpendPath[] = planEntries(desc).map(({ path, leaf }) => {
    if (leaf === undefined) {
      return {
        ...path,
        finalize: (signatureOf: SignatureOf): FinalScripts | string => {
          const sig = signatureOf(0);
          return sig ? { scriptSig, witness: [sig] } : 'The key path needs the internal key\'s signature';
        },
      };
    }
    const allowed = new Set(keysOf(path.signers));
    const root = desc.leaves[leaf]!.root;
    const tail = output.taproot ? [output.taproot.leafScripts[leaf]!, output.taproot.controlBlocks[leaf]!] : [output.witnessScript!];
    const indexOf = (text: string) => desc.keyTexts.indexOf(text);
    return {
      ...path,
      ...(output.taproot && { tapLeafHash: output.taproot.leafHashes[leaf]! }),
      finalize: (signatureOf: SignatureOf): FinalScripts | string => {
        try {
          const items = satisfy(root, {
            keyBytes: (text) => output.keys[indexOf(text)]!,
            // Only this path's keys and locks: the satisfier then takes this path and no other.
            signatureOf: (text) => (allowed.has(indexOf(text)) ? signatureOf(indexOf(text)) : undefined),
            checkOlder: (n) => path.sequence !== undefined && sequenceMeets(path.sequence, n),
            checkAfter: (n) => path.lockTime !== undefined && lockTimeMeets(path.lockTime, n),
          });
          return { scriptSig, witness: [...items, ...tail] };
        } catch (e) {
          if (e instanceof MiniscriptError) return e.message;
          throw e;
        }
      },
    };
  });
  return { segwit: true, keyCount: desc.keyTexts.length, keys: output.keys, paths };
}
