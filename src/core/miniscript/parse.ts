/**
 * Miniscript text to tree and back, as Bitcoin Core reads and prints it: wrappers `asctdvjnlu`
 * before a colon, `pk(K)` for `c:pk_k(K)`, `pkh(K)` for `c:pk_h(K)`, `t:`/`l:`/`u:` for
 * `and_v(X,1)`, `or_i(0,X)`, `or_i(X,0)`.
 */
import { fromHex, toHex } from '../bytes.js';
import { quoteInput } from '../text.js';
import { MiniscriptError } from './errors.js';
import { HASH_FRAGMENTS, hashLength, node, type Fragment, type HashFragment, type MiniscriptNode, type ScriptContext } from './node.js';

/** Deepest nesting accepted; Core's own limit for a tapscript is larger, but no sane wallet nears this. */
const MAX_DEPTH = 1100;
const WRAPPERS = 'asctdvjnlu';
const ARITY: Partial<Record<Fragment, number>> = { and_v: 2, and_b: 2, or_b: 2, or_c: 2, or_d: 2, or_i: 2, andor: 3 };

/** Split `a,b(c,d),e` at top-level commas. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(' || ch === '{') depth++;
    else if (ch === ')' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) throw new MiniscriptError('invalid_miniscript', 'Unbalanced parentheses');
  }
  if (depth !== 0) throw new MiniscriptError('invalid_miniscript', 'Unbalanced parentheses');
  parts.push(text.slice(start));
  return parts;
}

function parseNumber(text: string, what: string): number {
  if (!/^[0-9]{1,10}$/.test(text) || (text.length > 1 && text.startsWith('0'))) {
    throw new MiniscriptError('invalid_miniscript', `${what} must be a decimal number, got ${quoteInput(text, 20)}`);
  }
  return Number(text);
}

function parseLock(text: string, fragment: 'older' | 'after'): number {
  const k = parseNumber(text, `${fragment}()`);
  if (k < 1 || k >= 2 ** 31) throw new MiniscriptError('invalid_timelock', `${fragment}(${text}) must lie within 1..2147483647`);
  return k;
}

function parseKeyArgs(args: string[], fragment: string): string[] {
  args.forEach((k) => {
    if (k.length === 0) throw new MiniscriptError('invalid_miniscript', `Missing key in ${fragment}()`);
  });
  return args;
}

function parseThresholdArgs(fragment: 'multi' | 'multi_a', args: string[], ctx: ScriptContext): MiniscriptNode {
  if (fragment === 'multi' && ctx === 'tapscript') throw new MiniscriptError('multi_in_tapscript', 'multi() is not allowed in tapscript: use multi_a()');
  if (fragment === 'multi_a' && ctx === 'wsh') throw new MiniscriptError('multi_a_in_wsh', 'multi_a() is only allowed in tapscript: use multi() in wsh');
  const [kText = '', ...keys] = args;
  const k = parseNumber(kText, `${fragment}() threshold`);
  const max = fragment === 'multi' ? 20 : 999;
  if (keys.length < 1 || keys.length > max) throw new MiniscriptError('invalid_threshold', `${fragment}() takes 1 to ${max} keys, got ${keys.length}`);
  if (k < 1 || k > keys.length) throw new MiniscriptError('invalid_threshold', `${fragment}() threshold ${k} must lie within 1..${keys.length}`);
  return node(fragment, [], { k, keys: parseKeyArgs(keys, fragment) });
}

function parseFragment(name: string, argText: string, ctx: ScriptContext, depth: number): MiniscriptNode {
  const args = splitTop(argText);
  const sub = (text: string) => parseExpression(text, ctx, depth + 1);
  const one = () => {
    if (args.length !== 1) throw new MiniscriptError('invalid_miniscript', `${name}() takes one argument`);
    return args[0]!;
  };
  switch (name) {
    case 'pk': return node('c', [node('pk_k', [], { keys: parseKeyArgs([one()], name) })]);
    case 'pkh': return node('c', [node('pk_h', [], { keys: parseKeyArgs([one()], name) })]);
    case 'pk_k': case 'pk_h': return node(name, [], { keys: parseKeyArgs([one()], name) });
    case 'older': case 'after': return node(name, [], { k: parseLock(one(), name) });
    case 'multi': case 'multi_a': return parseThresholdArgs(name, args, ctx);
    case 'and_n': {
      if (args.length !== 2) throw new MiniscriptError('invalid_miniscript', `and_n() takes 2 arguments, got ${args.length}`);
      return node('andor', [sub(args[0]!), sub(args[1]!), node('0')]);
    }
    case 'thresh': {
      const [kText = '', ...subs] = args;
      const k = parseNumber(kText, 'thresh() threshold');
      if (subs.length < 1 || k < 1 || k > subs.length) throw new MiniscriptError('invalid_threshold', `thresh() threshold ${k} must lie within 1..${subs.length}`);
      return node('thresh', subs.map(sub), { k });
    }
  }
  if ((HASH_FRAGMENTS as readonly string[]).includes(name)) {
    const fragment = name as HashFragment;
    const text = one();
    if (!/^[0-9a-fA-F]*$/.test(text) || text.length !== hashLength(fragment) * 2) {
      throw new MiniscriptError('invalid_miniscript', `${name}() needs a ${hashLength(fragment)}-byte hex digest`);
    }
    return node(fragment, [], { hash: fromHex(text.toLowerCase()) });
  }
  const arity = ARITY[name as Fragment];
  if (arity === undefined) throw new MiniscriptError('invalid_miniscript', `Unknown miniscript fragment ${quoteInput(name, 30)}`);
  if (args.length !== arity) throw new MiniscriptError('invalid_miniscript', `${name}() takes ${arity} arguments, got ${args.length}`);
  return node(name as Fragment, args.map(sub));
}

function applyWrapper(w: string, x: MiniscriptNode): MiniscriptNode {
  if (w === 't') return node('and_v', [x, node('1')]);
  if (w === 'l') return node('or_i', [node('0'), x]);
  if (w === 'u') return node('or_i', [x, node('0')]);
  return node(w as Fragment, [x]);
}

function parseExpression(text: string, ctx: ScriptContext, depth: number): MiniscriptNode {
  if (depth > MAX_DEPTH) throw new MiniscriptError('invalid_miniscript', `Miniscript nests deeper than ${MAX_DEPTH} levels`);
  if (text === '0' || text === '1') return node(text);
  const paren = text.indexOf('(');
  const colon = text.indexOf(':');
  if (colon > 0 && (paren < 0 || colon < paren)) {
    const wrappers = text.slice(0, colon);
    if (![...wrappers].every((c) => WRAPPERS.includes(c))) throw new MiniscriptError('invalid_miniscript', `Unknown wrapper ${quoteInput(wrappers, 20)}`);
    let inner = parseExpression(text.slice(colon + 1), ctx, depth + wrappers.length);
    for (const w of [...wrappers].reverse()) inner = applyWrapper(w, inner);
    return inner;
  }
  if (paren <= 0 || !text.endsWith(')')) throw new MiniscriptError('invalid_miniscript', `Not a miniscript expression: ${quoteInput(text, 40)}`);
  return parseFragment(text.slice(0, paren), text.slice(paren + 1, -1), ctx, depth);
}

/** Parse miniscript text (keys kept as written; the caller checks them). */
export function parseMiniscript(text: string, ctx: ScriptContext): MiniscriptNode {
  if (text.length === 0) throw new MiniscriptError('invalid_miniscript', 'Empty miniscript');
  if (/\s/.test(text)) throw new MiniscriptError('invalid_miniscript', 'Miniscript must not contain spaces');
  return parseExpression(text, ctx, 0);
}

/** A node's text and whether it printed as a wrapper (so a parent wrapper joins without a colon). */
function print(n: MiniscriptNode): { text: string; wrapper: boolean } {
  const wrap = (letter: string, x: MiniscriptNode) => {
    const inner = print(x);
    return { text: letter + (inner.wrapper ? '' : ':') + inner.text, wrapper: true };
  };
  const [x, y, z] = n.subs;
  switch (n.fragment) {
    case 'c':
      if (x!.fragment === 'pk_k') return { text: `pk(${x!.keys[0]})`, wrapper: false };
      if (x!.fragment === 'pk_h') return { text: `pkh(${x!.keys[0]})`, wrapper: false };
      return wrap('c', x!);
    case 'a': case 's': case 'd': case 'v': case 'j': case 'n': return wrap(n.fragment, x!);
    case 'and_v':
      if (y!.fragment === '1') return wrap('t', x!);
      break;
    case 'or_i':
      if (x!.fragment === '0') return wrap('l', y!);
      if (y!.fragment === '0') return wrap('u', x!);
      break;
    case 'andor':
      if (z!.fragment === '0') return { text: `and_n(${print(x!).text},${print(y!).text})`, wrapper: false };
      break;
    case '0': case '1': return { text: n.fragment, wrapper: false };
    case 'pk_k': case 'pk_h': return { text: `${n.fragment}(${n.keys[0]})`, wrapper: false };
    case 'older': case 'after': return { text: `${n.fragment}(${n.k})`, wrapper: false };
    case 'multi': case 'multi_a': return { text: `${n.fragment}(${[n.k, ...n.keys].join(',')})`, wrapper: false };
    case 'thresh': return { text: `thresh(${[String(n.k), ...n.subs.map((s) => print(s).text)].join(',')})`, wrapper: false };
    case 'sha256': case 'hash256': case 'ripemd160': case 'hash160': return { text: `${n.fragment}(${toHex(n.hash!)})`, wrapper: false };
  }
  return { text: `${n.fragment}(${[x, y, z].filter((s) => s !== undefined).map((s) => print(s).text).join(',')})`, wrapper: false };
}

/** Canonical text of a tree (Core's ToString). */
export const printMiniscript = (n: MiniscriptNode): string => print(n).text;
