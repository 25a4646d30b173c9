/**
 * Miniscript output descriptors: `wsh(MS)`, `sh(wsh(MS))`, `tr(KEY)` and `tr(KEY,TREE)` with
 * tapscript leaves. Keys are BIP380 key expressions (xpubs with `/<0;1>/*`); the descriptor
 * derives them per index with the key code of `keys/`, then builds the scripts and address.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { encodeAddress, p2shScript, witnessScript } from '../address.js';
import { stripChecksum } from '../descriptor/checksum.js';
import { formatKeyExpression, multipathWidth, parseKeyExpression, selectMultipath, type KeyExpression } from '../descriptor/key-expression.js';
import { branchNode, compressPoint, deriveChildPointsOfNodes, derivePath, MAX_BATCH, type BranchNode } from '../keys/derive.js';
import type { Network } from '../network.js';
import { hash160 } from '../script-type.js';
import { assertSane, type MiniscriptFacts } from './analyse.js';
import { MiniscriptError } from './errors.js';
import { keysInOrder, type MiniscriptNode, type ScriptContext } from './node.js';
import { parseMiniscript } from './parse.js';
import { buildScript } from './script.js';
import { taprootOutputs, type TapTree } from './taproot.js';

export interface MiniscriptLeaf {
  readonly text: string;
  readonly root: MiniscriptNode;
  readonly facts: MiniscriptFacts;
  /** Depth in the tap tree (0 for a wsh script). */
  readonly depth: number;
}

export interface MiniscriptDescriptor {
  readonly kind: 'wsh' | 'sh-wsh' | 'tr';
  readonly network: Network;
  /** Distinct key texts in order of appearance (the taproot internal key first): key index i is keys[i]. */
  readonly keyTexts: readonly string[];
  readonly keys: readonly KeyExpression[];
  /** tr: the internal key's text. */
  readonly internalKey?: string;
  /** The wsh script, or the tapscript leaves in text order. */
  readonly leaves: readonly MiniscriptLeaf[];
  readonly tree?: TapTree;
  /** Branches of the `<a;b>` steps (1 without). */
  readonly multipath: number;
}

/** `{A,B}` tree text into leaf texts and the nested shape. */
function parseTree(text: string, leaves: { text: string; depth: number }[], depth: number): TapTree {
  if (depth > 128) throw new MiniscriptError('invalid_descriptor', 'The tap tree is deeper than 128 levels');
  if (!text.startsWith('{')) {
    leaves.push({ text, depth });
    return leaves.length - 1;
  }
  if (!text.endsWith('}')) throw new MiniscriptError('invalid_descriptor', 'Unbalanced braces in the tap tree');
  const inner = text.slice(1, -1);
  let level = 0;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i];
    if (ch === '(' || ch === '{') level++;
    else if (ch === ')' || ch === '}') level--;
    else if (ch === ',' && level === 0) return [parseTree(inner.slice(0, i), leaves, depth + 1), parseTree(inner.slice(i + 1), leaves, depth + 1)];
  }
  throw new MiniscriptError('invalid_descriptor', 'A tap tree branch {A,B} needs two parts');
}

function firstComma(text: string): number {
  let level = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(' || ch === '{') level++;
    else if (ch === ')' || ch === '}') level--;
    else if (ch === ',' && level === 0) return i;
  }
  return -1;
}

function leaf(text: string, ctx: ScriptContext, depth: number): MiniscriptLeaf {
  const root = parseMiniscript(text, ctx);
  return { text, root, facts: assertSane(root, ctx), depth };
}

export function parseMiniscriptDescriptor(text: string, network: Network): MiniscriptDescriptor {
  const { body } = stripChecksum(text.trim());
  let kind: MiniscriptDescriptor['kind'];
  let leaves: MiniscriptLeaf[];
  let internalKey: string | undefined;
  let tree: TapTree | undefined;
  if (body.startsWith('sh(wsh(') && body.endsWith('))')) {
    kind = 'sh-wsh';
    leaves = [leaf(body.slice(7, -2), 'wsh', 0)];
  } else if (body.startsWith('wsh(') && body.endsWith(')')) {
    kind = 'wsh';
    leaves = [leaf(body.slice(4, -1), 'wsh', 0)];
  } else if (body.startsWith('tr(') && body.endsWith(')')) {
    kind = 'tr';
    const inner = body.slice(3, -1);
    const comma = firstComma(inner);
    internalKey = comma < 0 ? inner : inner.slice(0, comma);
    const found: { text: string; depth: number }[] = [];
    if (comma >= 0) tree = parseTree(inner.slice(comma + 1), found, 0);
    leaves = found.map((l) => leaf(l.text, 'tapscript', l.depth));
  } else {
    throw new MiniscriptError('invalid_descriptor', 'A miniscript descriptor is wsh(...), sh(wsh(...)) or tr(KEY[,TREE])');
  }
  const taproot = kind === 'tr';
  const keyTexts = [...new Set([...(internalKey ? [internalKey] : []), ...leaves.flatMap((l) => keysInOrder(l.root))])];
  const keys = keyTexts.map((k) => parseKeyExpression(k, { network, compressedOnly: true, taproot }));
  // Two texts of one key (with and without its origin, `h` or `'`): the same key twice in a script.
  const identity = (i: number) => formatKeyExpression({ ...keys[i]!, origin: undefined }, network);
  for (const leaf of leaves) {
    const seen = new Set<string>();
    for (const text of new Set(keysInOrder(leaf.root))) {
      const id = identity(keyTexts.indexOf(text));
      if (seen.has(id)) throw new MiniscriptError('duplicate_key', `Key ${text.length > 80 ? `${text.slice(0, 77)}...` : text} appears more than once in ${leaf.text.length > 60 ? 'a script' : leaf.text}`);
      seen.add(id);
    }
  }
  const widths = new Set(keys.map(multipathWidth).filter((w) => w > 1));
  if (widths.size > 1) throw new MiniscriptError('multipath', 'Every multipath <a;b> step must have the same number of branches');
  return { kind, network, keyTexts, keys, leaves, multipath: [...widths][0] ?? 1, ...(internalKey !== undefined && { internalKey }), ...(tree !== undefined && { tree }) };
}

export interface MiniscriptOutput {
  readonly index: number;
  readonly scriptPubKey: Uint8Array;
  readonly address: string;
  readonly redeemScript?: Uint8Array;
  readonly witnessScript?: Uint8Array;
  /** Each key at this index, by key index (33-byte compressed; x-only for tr). */
  readonly keys: readonly Uint8Array[];
  readonly taproot?: {
    readonly internalKey: Uint8Array;
    readonly outputKey: Uint8Array;
    readonly leafScripts: readonly Uint8Array[];
    readonly leafHashes: readonly Uint8Array[];
    readonly controlBlocks: readonly Uint8Array[];
  };
}

/** A key at every index: fixed, or the children of its branch node (for `xpub/<0;1>/*`, the xpub's child 0 or 1). */
type KeySource = { readonly fixed: Uint8Array } | { readonly node: BranchNode };

function keySource(key: KeyExpression, branch: number): KeySource {
  const k = selectMultipath(key, branch);
  if (k.kind === 'pubkey') return { fixed: k.publicKey };
  const parent = derivePath(k.xpub, k.steps.map((s) => s as number));
  return k.wildcard ? { node: branchNode(parent) } : { fixed: parent.publicKey };
}

function checkBranch(desc: MiniscriptDescriptor, branch: number): void {
  if (!Number.isInteger(branch) || branch < 0 || branch >= desc.multipath) {
    throw new MiniscriptError('multipath', `The descriptor has ${desc.multipath} multipath branch(es)`);
  }
}

/**
 * Outputs of indices from..from+count-1 of one multipath branch: every key's children in one batch,
 * which shares its field inversions (as DescriptorDeriver does for the fixed shapes).
 */
export function deriveMiniscriptRange(desc: MiniscriptDescriptor, from: number, count: number, branch = 0): MiniscriptOutput[] {
  checkBranch(desc, branch);
  if (!Number.isInteger(from) || from < 0 || !Number.isInteger(count) || count < 0 || count > MAX_BATCH || from + count > 2 ** 31) {
    throw new MiniscriptError('invalid_index', `Index range must lie within 0..${2 ** 31 - 1}, at most ${MAX_BATCH} at a time`);
  }
  const sources = desc.keys.map((k) => keySource(k, branch));
  const nodes = sources.flatMap((s) => ('node' in s ? [s.node] : []));
  const points = deriveChildPointsOfNodes(nodes, from, count);
  let next = 0;
  const perKey = sources.map((s) => {
    if ('fixed' in s) return undefined;
    return points[next++]!;
  });
  const keysAt = Array.from({ length: count }, (_, i) =>
    sources.map((s, k) => {
      const bytes = 'fixed' in s ? s.fixed : compressPoint(perKey[k]![i]!.x, perKey[k]![i]!.y);
      return desc.kind === 'tr' && bytes.length === 33 ? bytes.subarray(1) : bytes;
    }),
  );
  if (desc.kind !== 'tr') return keysAt.map((keys, i) => segwitOutput(desc, from + i, keys));
  return taprootRange(desc, from, keysAt);
}

export function deriveMiniscriptOutput(desc: MiniscriptDescriptor, index: number, branch = 0): MiniscriptOutput {
  return deriveMiniscriptRange(desc, index, 1, branch)[0]!;
}

const scriptsOf = (desc: MiniscriptDescriptor, keys: readonly Uint8Array[]) => {
  const keyBytes = (text: string) => keys[desc.keyTexts.indexOf(text)]!;
  return desc.leaves.map((l) => buildScript(l.root, keyBytes, l.facts.types));
};

function segwitOutput(desc: MiniscriptDescriptor, index: number, keys: Uint8Array[]): MiniscriptOutput {
  const ws = scriptsOf(desc, keys)[0]!;
  const program = witnessScript(0, sha256(ws));
  if (desc.kind === 'wsh') return { index, scriptPubKey: program, address: encodeAddress(program, desc.network)!, witnessScript: ws, keys };
  const spk = p2shScript(hash160(program));
  return { index, scriptPubKey: spk, address: encodeAddress(spk, desc.network)!, redeemScript: program, witnessScript: ws, keys };
}

function taprootRange(desc: MiniscriptDescriptor, from: number, keysAt: Uint8Array[][]): MiniscriptOutput[] {
  const internal = desc.keyTexts.indexOf(desc.internalKey!);
  const inputs = keysAt.map((keys) => ({ internalKey: keys[internal]!, tree: desc.tree, leafScripts: scriptsOf(desc, keys) }));
  return taprootOutputs(inputs).map((out, i) => {
    const spk = witnessScript(1, out.outputKey);
    const { internalKey, leafScripts } = inputs[i]!;
    return {
      index: from + i,
      scriptPubKey: spk,
      address: encodeAddress(spk, desc.network)!,
      keys: keysAt[i]!,
      taproot: { internalKey, outputKey: out.outputKey, leafScripts, leafHashes: out.leafHashes, controlBlocks: out.controlBlocks },
    };
  });
}
