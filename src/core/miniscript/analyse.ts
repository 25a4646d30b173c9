/**
 * Validity and sanity of a miniscript in its context (Core's IsValidTopLevel / IsSane): a script
 * the service accepts can be spent without a signature being forged, without a third party
 * changing the witness, and within the standardness limits. Refusals name the first reason.
 */
import { MiniscriptError } from './errors.js';
import { keysInOrder, type MiniscriptNode, type ScriptContext } from './node.js';
import { printMiniscript } from './parse.js';
import { execStackSize, opsCount, satisfactionFigures } from './limits.js';
import { scriptSize } from './script.js';
import { has, typeString, typeTree, type TypeBits } from './types.js';

/** Standardness limits of a P2WSH witness script (policy/policy.h, script/script.h). */
export const WSH_LIMITS = { scriptBytes: 3600, ops: 201, stackItems: 100 } as const;
/** Stack elements a script may hold while it runs (consensus, script/script.h MAX_STACK_SIZE). */
export const MAX_EXEC_STACK = 1000;

export interface MiniscriptFacts {
  readonly context: ScriptContext;
  /** Type letters of the root, e.g. "Bzudemsk"; empty when invalid. */
  readonly type: string;
  readonly scriptSize: number;
  /** Opcodes a satisfaction can execute (the 201 limit of wsh); null when unsatisfiable. */
  readonly ops: number | null;
  /** Most witness items a satisfaction needs (without the script); null when unsatisfiable. */
  readonly stackSize: number | null;
  /** Most stack elements while a satisfaction runs (tapscript's limit is 1,000); null when unsatisfiable. */
  readonly execStackSize: number | null;
  /** Largest satisfaction in serialized bytes (Core's GetWitnessSize: ECDSA 73, Schnorr 66 a signature). */
  readonly maxWitnessSize: number | null;
  readonly types: Map<MiniscriptNode, TypeBits>;
}

export function miniscriptFacts(root: MiniscriptNode, ctx: ScriptContext): MiniscriptFacts {
  const types = typeTree(root, ctx);
  const t = types.get(root)!;
  const figures = satisfactionFigures(root, ctx);
  return {
    context: ctx,
    type: typeString(t),
    scriptSize: scriptSize(root, ctx, types),
    ops: t === 0 ? null : opsCount(root, types),
    stackSize: figures.items,
    execStackSize: t === 0 ? null : execStackSize(root, types),
    maxWitnessSize: figures.bytes,
    types,
  };
}

/** The deepest node whose own combination fails while its subs are fine: what to tell the user. */
function firstInvalid(root: MiniscriptNode, types: Map<MiniscriptNode, TypeBits>): MiniscriptNode | undefined {
  if (types.get(root) !== 0) return undefined;
  for (const sub of root.subs) {
    const found = firstInvalid(sub, types);
    if (found) return found;
  }
  return root;
}

function duplicateKey(root: MiniscriptNode): string | undefined {
  const seen = new Set<string>();
  return keysInOrder(root).find((k) => (seen.has(k) ? true : (seen.add(k), false)));
}

const short = (n: MiniscriptNode) => {
  const text = printMiniscript(n);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** Why the tree is not valid (types, top level, script size), or undefined. */
export function validityProblem(root: MiniscriptNode, facts: MiniscriptFacts): MiniscriptError | undefined {
  const bad = firstInvalid(root, facts.types);
  if (bad) {
    const subs = bad.subs.map((s) => `${typeString(facts.types.get(s)!).replace(/[^BVKWzondu]/g, '')}`).join(', ');
    return new MiniscriptError('invalid_type', `${short(bad)} is not valid miniscript: ${bad.fragment} cannot take arguments of types (${subs})`);
  }
  if (!has(facts.types.get(root)!, 'B')) return new MiniscriptError('invalid_type', `The top level must be of type B, ${short(root)} is ${facts.type}`);
  if (facts.context === 'wsh' && facts.scriptSize > WSH_LIMITS.scriptBytes) {
    return new MiniscriptError('script_size', `The witness script is ${facts.scriptSize} bytes, over the ${WSH_LIMITS.scriptBytes}-byte limit of wsh`);
  }
  return undefined;
}

/** Why the tree is valid but not sane, or undefined. */
export function sanityProblem(root: MiniscriptNode, facts: MiniscriptFacts): MiniscriptError | undefined {
  const invalid = validityProblem(root, facts);
  if (invalid) return invalid;
  const t = facts.types.get(root)!;
  if (facts.context === 'wsh' && facts.ops !== null && facts.ops > WSH_LIMITS.ops) {
    return new MiniscriptError('ops_limit', `A satisfaction can execute ${facts.ops} opcodes, over the ${WSH_LIMITS.ops} limit of wsh`);
  }
  if (facts.context === 'wsh' && facts.stackSize !== null && facts.stackSize > WSH_LIMITS.stackItems) {
    return new MiniscriptError('stack_size', `A satisfaction can need ${facts.stackSize} witness items, over the ${WSH_LIMITS.stackItems} limit of wsh`);
  }
  if (facts.context === 'tapscript' && facts.execStackSize !== null && facts.execStackSize > MAX_EXEC_STACK) {
    return new MiniscriptError('stack_size', `A satisfaction can hold ${facts.execStackSize} stack elements while it runs, over the ${MAX_EXEC_STACK} limit`);
  }
  if (!has(t, 'k')) return new MiniscriptError('timelock_mix', 'The script mixes height and time locks in one spending path, which no transaction can satisfy');
  const dup = duplicateKey(root);
  if (dup !== undefined) return new MiniscriptError('duplicate_key', `Key ${dup.length > 80 ? `${dup.slice(0, 77)}...` : dup} appears more than once`);
  if (!has(t, 'm')) return new MiniscriptError('malleable', 'The script is malleable: a third party could change a witness without a signature');
  if (!has(t, 's')) return new MiniscriptError('no_signature_needed', 'The script can be spent without any signature');
  // Beyond Core's sanity (which accepts e.g. or_b(0,a:0)): a script no witness satisfies holds coins forever.
  if (facts.ops === null) return new MiniscriptError('unsatisfiable', 'No witness can satisfy the script');
  return undefined;
}

/** Throws the reason the tree is not sane in its context. */
export function assertSane(root: MiniscriptNode, ctx: ScriptContext): MiniscriptFacts {
  const facts = miniscriptFacts(root, ctx);
  const problem = sanityProblem(root, facts);
  if (problem) throw problem;
  return facts;
}
