/** Miniscript: policy compilation, sanity refusals by reason, spending paths and the satisfier. */
import { describe, expect, it } from 'vitest';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import {
  assertSane, compilePolicy, miniscriptFacts, MiniscriptError, parseMiniscript, printMiniscript, satisfy, sequenceMeets, spendingPaths,
  type ScriptContext,
} from '../../../src/core/miniscript/index.js';

/** Public keys of the private keys 1, 2, 3... (as Core's miniscript tests use). */
const key = (i: number) => toHex(secp256k1.getPublicKey(fromHex(i.toString(16).padStart(64, '0')), true));
const [A, B, C, H, L] = [1, 2, 3, 4, 5].map(key) as [string, string, string, string, string];

function refusal(text: string, ctx: ScriptContext): string {
  try {
    assertSane(parseMiniscript(text, ctx), ctx);
  } catch (e) {
    if (e instanceof MiniscriptError) return e.code;
    throw e;
  }
  return 'sane';
}

describe('policy compilation', () => {
  it('an heir after a year: the Liana form', () => {
    const c = compilePolicy({ script: 'wsh', paths: [{ threshold: 2, keys: [A, B, C] }, { threshold: 1, keys: [H], older: 52560 }] });
    expect(c).toMatchObject({ miniscript: `or_d(multi(2,${A},${B},${C}),and_v(v:pkh(${H}),older(52560)))` });
  });

  it('several recoveries join with or_i; a multi-key recovery is and_v(v:multi(...),older(n))', () => {
    const c = compilePolicy({
      script: 'wsh',
      paths: [{ threshold: 1, keys: [A] }, { threshold: 2, keys: [B, C], older: 1000 }, { threshold: 1, keys: [H], after: 900000 }],
    });
    expect(c).toMatchObject({ miniscript: `or_d(pk(${A}),or_i(and_v(v:multi(2,${B},${C}),older(1000)),and_v(v:pkh(${H}),after(900000))))` });
  });

  it('3-of-3 decaying to 2-of-3 is one thresh with a lock part', () => {
    const c = compilePolicy({ script: 'wsh', paths: [{ threshold: 3, keys: [A, B, C] }, { threshold: 2, keys: [A, B, C], older: 4320 }] });
    expect(c).toMatchObject({ miniscript: `thresh(3,pk(${A}),s:pk(${B}),s:pk(${C}),sln:older(4320))` });
    const root = parseMiniscript((c as { miniscript: string }).miniscript, 'wsh');
    const paths = spendingPaths(root, 'wsh', [A, B, C], { signature: 72 });
    expect(paths.map((p) => [p.signers, p.sequence])).toEqual([[{ k: 3, of: [0, 1, 2] }, undefined], [{ k: 2, of: [0, 1, 2] }, 4320]]);
  });

  it("2-of-3 becoming 2-of-4 with a lawyer's key after six months", () => {
    const c = compilePolicy({ script: 'wsh', paths: [{ threshold: 2, keys: [A, B, C] }, { threshold: 2, keys: [A, B, C, L], older: 26280 }] });
    const text = (c as { miniscript: string }).miniscript;
    expect(text).toBe(`thresh(2,pk(${A}),s:pk(${B}),s:pk(${C}),a:and_n(pk(${L}),n:older(26280)))`);
    const paths = spendingPaths(parseMiniscript(text, 'wsh'), 'wsh', [A, B, C, L], { signature: 72 });
    expect(paths.map((p) => [p.signers, p.sequence])).toEqual([
      [{ k: 2, of: [0, 1, 2] }, undefined],
      [{ k: 2, of: [{ k: 1, of: [0, 1, 2] }, 3] }, 26280],
    ]);
  });

  it('tr: NUMS internal key and multi_a leaves; a single primary key becomes the key path', () => {
    const multi = compilePolicy({ script: 'tr', paths: [{ threshold: 2, keys: [A, B, C] }, { threshold: 1, keys: [H], older: 52560 }] });
    expect(multi.descriptor).toBe(`tr(50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0,{multi_a(2,${A},${B},${C}),and_v(v:pk(${H}),older(52560))})`);
    const single = compilePolicy({ script: 'tr', paths: [{ threshold: 1, keys: [A] }, { threshold: 2, keys: [B, C], older: 100 }, { threshold: 1, keys: [H], older: 200 }] });
    expect(single.descriptor).toBe(`tr(${A},{and_v(v:multi_a(2,${B},${C}),older(100)),and_v(v:pk(${H}),older(200))})`);
  });

  it('refuses policies it cannot express, naming why', () => {
    const code = (f: () => unknown) => { try { f(); } catch (e) { return (e as MiniscriptError).code; } return 'ok'; };
    expect(code(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 1, keys: [A], older: 10 }] }))).toBe('invalid_policy');
    expect(code(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 1, keys: [A] }, { threshold: 1, keys: [A, B], older: 70000 }] }))).toBe('invalid_timelock');
    expect(code(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 2, keys: [A, B] }, { threshold: 1, keys: [B, C], older: 10 }] }))).toBe('unsupported_policy');
    expect(code(() => compilePolicy({ script: 'wsh', paths: [{ threshold: 3, keys: [A, B] }] }))).toBe('invalid_threshold');
  });
});

describe('sanity refusals name the reason', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => key(i + 1));
  it.each([
    ['malleable', `and_v(v:pk(${A}),or_i(older(10),older(20)))`, 'wsh'],
    ['no_signature_needed', 'older(10)', 'wsh'],
    ['timelock_mix', `and_v(v:pk(${A}),and_v(v:after(100),after(1000000000)))`, 'wsh'],
    ['duplicate_key', `and_v(v:pk(${A}),pk(${A}))`, 'wsh'],
    ['ops_limit', `thresh(70,${many(70).map((k, i) => (i === 0 ? `pk(${k})` : `s:pk(${k})`)).join(',')})`, 'wsh'],
    ['script_size', `${many(110).slice(2).map((k) => `and_v(v:pk(${k}),`).join('')}and_v(v:pk(${A}),pk(${B}))${')'.repeat(108)}`, 'wsh'],
    ['multi_a_in_wsh', `multi_a(1,${A},${B})`, 'wsh'],
    ['multi_in_tapscript', `multi(1,${A},${B})`, 'tapscript'],
    ['invalid_type', `and_v(pk(${A}),pk(${B}))`, 'wsh'],
    ['unsatisfiable', `and_b(pk(${A}),a:0)`, 'wsh'],
  ] as const)('%s', (reason, text, ctx) => {
    expect(refusal(text, ctx)).toBe(reason);
  });

  it('deep nesting is refused by name, never by overflowing the stack', () => {
    expect(refusal(`${'or_i(0,'.repeat(2500)}pk(${A})${')'.repeat(2500)}`, 'tapscript')).toBe('invalid_miniscript');
    expect(refusal(`${'n'.repeat(100_000)}:pk(${A})`, 'tapscript')).toBe('invalid_miniscript');
    // 1,199 levels parse; the execution stack is what tapscript refuses them for.
    expect(refusal(`${'or_i(0,'.repeat(1199)}pk(${A})${')'.repeat(1199)}`, 'tapscript')).toBe('stack_size');
  });

  it('the same large script is fine in tapscript', () => {
    const text = `thresh(70,${many(70).map((k, i) => (i === 0 ? `pk(${k})` : `s:pk(${k})`)).join(',')})`;
    expect(refusal(text, 'tapscript')).toBe('sane');
  });
});

describe('spending paths and the satisfier', () => {
  const text = `or_d(multi(2,${A},${B},${C}),and_v(v:pkh(${H}),older(52560)))`;
  const root = parseMiniscript(text, 'wsh');

  it('lists each path with its largest witness', () => {
    expect(printMiniscript(root)).toBe(text);
    expect(spendingPaths(root, 'wsh', [A, B, C, H], { signature: 72 })).toEqual([
      { signers: { k: 2, of: [0, 1, 2] }, needs: [], witness: [0, 72, 72] },
      { signers: { k: 1, of: [3] }, sequence: 52560, needs: [], witness: [72, 33, 0, 0, 0] },
    ]);
    // Core's figure for the whole script: the larger path (the 2-of-3), each item with its length byte.
    expect(miniscriptFacts(root, 'wsh').maxWitnessSize).toBe(1 + 2 * 73);
  });

  const sigs: Record<string, Uint8Array> = Object.fromEntries([A, B, C, H].map((k, i) => [k, new Uint8Array(71).fill(i + 1)]));
  const inputs = (signed: string[], sequence: number) => ({
    keyBytes: fromHex,
    signatureOf: (k: string) => (signed.includes(k) ? sigs[k] : undefined),
    checkOlder: (n: number) => sequenceMeets(sequence, n),
    checkAfter: () => false,
  });

  it('satisfies the primary path with the first signatures in key order', () => {
    const w = satisfy(root, inputs([A, C, B], 0xfffffffd));
    expect(w.map(toHex)).toEqual(['', toHex(sigs[A]!), toHex(sigs[B]!)]);
  });

  it('takes the heir path only once the sequence meets the lock', () => {
    expect(() => satisfy(root, inputs([H], 52559))).toThrow(MiniscriptError);
    const w = satisfy(root, inputs([H], 52560));
    expect(w.map(toHex)).toEqual([toHex(sigs[H]!), H, '', '', '']);
  });
});
