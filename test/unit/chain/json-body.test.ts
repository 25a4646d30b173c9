/**
 * The node's answers parsed reply by reply give what JSON.parse of the whole text gives, and fail where it fails.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/chain/bitcoind/json-body.js';

/** Long enough to be split (answers from 64 KiB on). */
const PADDING = 'ab'.repeat(33_000);
const buffer = (text: string) => Buffer.from(text, 'utf8');
const failure = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as Error).name;
  }
};

// Strings full of what the splitter must step over: quotes, backslashes, braces and brackets.
const trickyString = fc.stringMatching(/^[\\"{}[\],: a-z0-9]{0,12}$/);
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, trickyString, fc.integer(), fc.boolean(), fc.constant(null), tie('list'), tie('object')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
})).value;
const reply = fc.record({ result: value, error: fc.constant(null), id: fc.nat() });

describe('parseJsonBody', () => {
  it('a large list of replies, however written, parses as JSON.parse parses it', () => {
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 8 }), fc.constantFrom(undefined, 1, '\t'), (replies, indent) => {
        const text = JSON.stringify([{ result: PADDING, error: null, id: 0 }, ...replies], null, indent);
        expect(text.length).toBeGreaterThan(64 * 1024);
        expect(parseJsonBody(buffer(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('fails where JSON.parse fails, at whatever place the text is cut, or a character put in or replaced', () => {
    const replies = [{ result: PADDING, error: null, id: 0 }, { result: { 'a"}': ['\\', '[', { b: '],' }] }, error: null, id: 1 }, { result: null, error: { code: -5, message: '{"' }, id: 2 }];
    const whole = JSON.stringify(replies, null, 1);
    // Every place after the padding: in the replies the splitter reads one by one, between them, at the end.
    const edits = (at: number) => [
      whole.slice(0, at),
      ...['', ']', '}', '[', '{', ',', '"', '\\', 'x', ' '].flatMap((c) => [whole.slice(0, at) + c + whole.slice(at), whole.slice(0, at) + c + whole.slice(at + 1)]),
    ];
    for (let at = whole.indexOf(PADDING) + PADDING.length; at <= whole.length; at++) {
      for (const text of edits(at)) {
        const expected = failure(() => JSON.parse(text));
        expect(failure(() => parseJsonBody(buffer(text))), JSON.stringify(text.slice(at - 20, at + 20))).toBe(expected);
        if (expected === undefined) expect(parseJsonBody(buffer(text))).toEqual(JSON.parse(text));
      }
    }
  });

  it('a large answer of another shape, an empty list and text that is not ASCII parse as JSON.parse parses them', () => {
    for (const text of [
      JSON.stringify([PADDING, { id: 1 }]),
      JSON.stringify({ result: PADDING, error: null, id: 1 }),
      `  [  ]  `,
      JSON.stringify([{ result: `Café ${PADDING}`, error: null, id: 1 }, { result: '€', id: 2 }]),
    ]) {
      expect(parseJsonBody(buffer(text))).toEqual(JSON.parse(text));
    }
    expect(failure(() => parseJsonBody(buffer(`[{"result":"${PADDING}"}]]`)))).toBe('SyntaxError');
    expect(failure(() => parseJsonBody(buffer(`[{"result":"${PADDING}"}`)))).toBe('SyntaxError');
    expect(failure(() => parseJsonBody(buffer(`[{"result":"${PADDING}\\"}]`)))).toBe('SyntaxError');
  });
});
