/**
 * Miniscript text to tree and back, as Bitcoin Core reads and prints it: wrappers `asctdvjnlu`
 * before a colon, `pk(K)` for `c:pk_k(K)`, `pkh(K)` for `c:pk_h(K)`, `t:`/`l:`/`u:` for
 * `and_v(X,1)`, `or_i(0,X)`, `or_i(X,0)`.
 */
import { fromHex, toHex } from '../bytes.js';
import { quoteInput } from '../text.js';
import { MiniscriptError } from './errors.js';
import { HASH_FRAGMENTS, hashLength, node, type Fragment, type HashFragment, type MiniscriptNode, type ScriptContext } from './node.js';

/**
 * Deepest nesting of fragments accepted (wrappers do not count): Core's deepest test vector (998 and_b
 * with a: wrappers) fits, and the parser's recursion stays well inside Node.js's default stack.
 */
const MAX_DEPTH = 1200;
/** Deepest tree accepted, wrappers included (each is a node the walkers recurse through). */
const MAX_NODE_DEPTH = 2100;
const WRAPPERS = 'asctdvjnlu';
const ARITY: Partial<Record<Fragment, number>> = { and_v: 2, and_b: 2, or_b: 2, or_c: 2, or_d: 2, or_i: 2, andor: 3 };

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

function checkKeys(args: string[], fragment: string): string[] {
  args.forEach((k) => {
    if (k.length === 0) throw new MiniscriptError('invalid_miniscript', `Missing key in ${fragment}()`);
  });
  return args;
}

function thresholdNode(fragment: 'multi' | 'multi_a', args: string[], ctx: ScriptContext): MiniscriptNode {
  if (fragment === 'multi' && ctx === 'tapscript') throw new MiniscriptError('multi_in_tapscript', 'multi() is not allowed in tapscript: use multi_a()');
  if (fragment === 'multi_a' && ctx === 'wsh') throw new MiniscriptError('multi_a_in_wsh', 'multi_a() is only allowed in tapscript: use multi() in wsh');
  const [kText = '', ...keys] = args;
  const k = parseNumber(kText, `${fragment}() threshold`);
  const max = fragment === 'multi' ? 20 : 999;
  if (keys.length < 1 || keys.length > max) throw new MiniscriptError('invalid_threshold', `${fragment}() takes 1 to ${max} keys, got ${keys.length}`);
  if (k < 1 || k > keys.length) throw new MiniscriptError('invalid_threshold', `${fragment}() threshold ${k} must lie within 1..${keys.length}`);
  return node(fragment, [], { k, keys: checkKeys(keys, fragment) });
}

function applyWrapper(w: string, x: MiniscriptNode): MiniscriptNode {
  if (w === 't') return node('and_v', [x, node('1')]);
  if (w === 'l') return node('or_i', [node('0'), x]);
  if (w === 'u') return node('or_i', [x, node('0')]);
  return node(w as Fragment, [x]);
}

const NAME = /[a-z0-9_]/;

/** One pass over the text (each character read once), so the time grows with the length only. */
class Reader {
  pos = 0;
  constructor(readonly text: string, readonly ctx: ScriptContext) {}

  private expect(ch: string): void {
    if (this.text[this.pos] !== ch) {
      const found = this.pos < this.text.length ? quoteInput(this.text.slice(this.pos, this.pos + 20), 20) : 'the end';
      throw new MiniscriptError('invalid_miniscript', `Expected "${ch}" at character ${this.pos + 1}, found ${found}`);
    }
    this.pos++;
  }

  private name(): string {
    const start = this.pos;
    while (this.pos < this.text.length && NAME.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** Plain arguments (keys, numbers, digests) up to the closing parenthesis. */
  private plainArgs(): string[] {
    const close = this.text.indexOf(')', this.pos);
    if (close < 0) throw new MiniscriptError('invalid_miniscript', 'Unbalanced parentheses');
    const inner = this.text.slice(this.pos, close);
    if (inner.includes('(')) throw new MiniscriptError('invalid_miniscript', `Unexpected "(" in ${quoteInput(inner, 40)}`);
    this.pos = close + 1;
    return inner.split(',');
  }

  private subArgs(count: number, name: string, depth: number, nodes: number): MiniscriptNode[] {
    const subs = [this.expression(depth + 1, nodes + 1)];
    while (this.text[this.pos] === ',') {
      this.pos++;
      subs.push(this.expression(depth + 1, nodes + 1));
    }
    this.expect(')');
    if (count > 0 && subs.length !== count) throw new MiniscriptError('invalid_miniscript', `${name}() takes ${count} arguments, got ${subs.length}`);
    return subs;
  }

  expression(depth: number, nodes: number): MiniscriptNode {
    if (depth > MAX_DEPTH || nodes > MAX_NODE_DEPTH) {
      throw new MiniscriptError('invalid_miniscript', `Miniscript nests deeper than ${MAX_DEPTH} fragments or ${MAX_NODE_DEPTH} fragments and wrappers`);
    }
    const name = this.name();
    if (this.text[this.pos] === ':') {
      if (name.length === 0 || ![...name].every((c) => WRAPPERS.includes(c))) throw new MiniscriptError('invalid_miniscript', `Unknown wrapper ${quoteInput(name, 20)}`);
      this.pos++;
      let inner = this.expression(depth, nodes + name.length);
      for (const w of [...name].reverse()) inner = applyWrapper(w, inner);
      return inner;
    }
    if ((name === '0' || name === '1') && this.text[this.pos] !== '(') return node(name);
    if (name.length === 0) throw new MiniscriptError('invalid_miniscript', `Expected a miniscript fragment at character ${this.pos + 1}`);
    this.expect('(');
    return this.fragment(name, depth, nodes);
  }

  private fragment(name: string, depth: number, nodes: number): MiniscriptNode {
    const one = () => {
      const args = this.plainArgs();
      if (args.length !== 1) throw new MiniscriptError('invalid_miniscript', `${name}() takes one argument`);
      return args[0]!;
    };
    switch (name) {
      case 'pk': return node('c', [node('pk_k', [], { keys: checkKeys([one()], name) })]);
      case 'pkh': return node('c', [node('pk_h', [], { keys: checkKeys([one()], name) })]);
      case 'pk_k': case 'pk_h': return node(name, [], { keys: checkKeys([one()], name) });
      case 'older': case 'after': return node(name, [], { k: parseLock(one(), name) });
      case 'multi': case 'multi_a': return thresholdNode(name, this.plainArgs(), this.ctx);
      case 'and_n': {
        const [x, y] = this.subArgs(2, name, depth, nodes);
        return node('andor', [x!, y!, node('0')]);
      }
      case 'thresh': {
        const comma = this.text.indexOf(',', this.pos);
        const kText = comma < 0 ? '' : this.text.slice(this.pos, comma);
        const k = parseNumber(kText, 'thresh() threshold');
        this.pos = comma + 1;
        const subs = this.subArgs(0, name, depth, nodes);
        if (k < 1 || k > subs.length) throw new MiniscriptError('invalid_threshold', `thresh() threshold ${k} must lie within 1..${subs.length}`);
        return node('thresh', subs, { k });
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
    return node(name as Fragment, this.subArgs(arity, name, depth, nodes));
  }
}

/** Parse miniscript text (keys kept as written; the caller checks them). */
export function parseMiniscript(text: string, ctx: ScriptContext): MiniscriptNode {
  if (text.length === 0) throw new MiniscriptError('invalid_miniscript', 'Empty miniscript');
  if (/\s/.test(text)) throw new MiniscriptError('invalid_miniscript', 'Miniscript must not contain spaces');
  const reader = new Reader(text, ctx);
  const root = reader.expression(0, 0);
  if (reader.pos !== text.length) throw new MiniscriptError('invalid_miniscript', `Unexpected text after the miniscript at character ${reader.pos + 1}`);
  return root;
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
