/**
 * The spend plan of a miniscript descriptor (see `core/spend-plan.ts`): its spending paths with
 * key indexes into the descriptor's keys, and the largest input each path can need, script and
 * control block included.
 */
import type { SpendPath, SpendPlan } from '../spend-plan.js';
import { NUMS_H } from './compile.js';
import type { MiniscriptDescriptor } from './descriptor.js';
import { printMiniscript } from './parse.js';
import { spendingPaths } from './paths.js';

/** Witness item lengths of Bitcoin Core's watch-only estimates. */
export const SIGNATURE_BYTES = { ecdsa: 72, schnorr: 64 } as const;

/** Bytes of the P2SH-P2WSH scriptSig: one push of the 34-byte witness program. */
const SH_WSH_SCRIPT_SIG = 35;

/** True when the taproot internal key is BIP341's unspendable H (no key path). */
export const isUnspendableKey = (key: string): boolean => key.toLowerCase() === NUMS_H;

export function miniscriptSpendPlan(desc: MiniscriptDescriptor): SpendPlan {
  const paths: SpendPath[] = [];
  const taproot = desc.kind === 'tr';
  if (taproot && !isUnspendableKey(desc.internalKey!)) {
    paths.push({ name: 'key', signers: { k: 1, of: [0] }, scheme: 'schnorr', size: { scriptSig: 0, witness: [SIGNATURE_BYTES.schnorr] } });
  }
  for (const leaf of desc.leaves) {
    const ctx = taproot ? 'tapscript' : 'wsh';
    const signature = taproot ? SIGNATURE_BYTES.schnorr : SIGNATURE_BYTES.ecdsa;
    const text = printMiniscript(leaf.root);
    const tail = taproot ? [leaf.facts.scriptSize, 33 + 32 * leaf.depth] : [leaf.facts.scriptSize];
    const found = spendingPaths(leaf.root, ctx, desc.keyTexts, { signature });
    // Paths without a lock first: the one a wallet normally takes.
    found.sort((a, b) => Number(a.sequence !== undefined || a.lockTime !== undefined) - Number(b.sequence !== undefined || b.lockTime !== undefined));
    found.forEach((p, i) => {
      paths.push({
        name: found.length === 1 ? text : `${text}#${i + 1}`,
        signers: p.signers,
        scheme: taproot ? 'schnorr' : 'ecdsa',
        size: { scriptSig: desc.kind === 'sh-wsh' ? SH_WSH_SCRIPT_SIG : 0, witness: [...p.witness, ...tail] },
        ...(p.sequence !== undefined && { sequence: p.sequence }),
        ...(p.lockTime !== undefined && { lockTime: p.lockTime }),
        ...(p.needs.length > 0 && { needs: p.needs }),
      });
    });
  }
  return { segwit: true, keyCount: desc.keyTexts.length, paths };
}
