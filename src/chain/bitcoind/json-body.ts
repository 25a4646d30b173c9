/**
 * Parses the node's JSON answers. A batch answer (a list of replies) is parsed one reply at a time. Read whole,
 * its text is one string as long as the answer (hundreds of KB of hex filters or blocks), which V8 places in
 * memory of its own and gives back once dropped, so every answer touched fresh pages again: about 3,500 page
 * faults in a scan with filters and 40,000 without them (bench/rescan), at about 12 µs each on a virtual machine.
 * Each reply is small enough for V8's ordinary heap, whose pages are used again.
 */
import { isAscii } from 'node:buffer';

/** Answers shorter than this are parsed whole: splitting them saves nothing. */
const SPLIT_FROM_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The body as JSON, as `JSON.parse` of its text would give it; throws (a SyntaxError) where that would. */
export function parseJsonBody(body: Buffer): unknown {
  // Answers are nearly always ASCII (hex), which latin1 decodes much faster than UTF-8.
  if (!isAscii(body)) return JSON.parse(body.toString('utf8'));
  if (body.length >= SPLIT_FROM_BYTES) {
    const replies = parseListOfObjects(body);
    if (replies !== undefined) return replies;
  }
  return JSON.parse(body.toString('latin1'));
}

/**
 * A list of objects (`[{...}, {...}]`), each object parsed on its own; undefined for any other shape (the
 * caller parses the whole text, which then says what is wrong with it).
 */
function parseListOfObjects(bytes: Buffer): unknown[] | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACKET) return undefined;
  i = skipSpace(bytes, i + 1);
  const replies: unknown[] = [];
  if (bytes[i] === CLOSE_BRACKET) return skipSpace(bytes, i + 1) === bytes.length ? replies : undefined;
  for (;;) {
    if (bytes[i] !== OPEN_BRACE) return undefined;
    const end = objectEnd(bytes, i);
    if (end === undefined) return undefined;
    replies.push(JSON.parse(bytes.toString('latin1', i, end)));
    i = skipSpace(bytes, end);
    if (bytes[i] === CLOSE_BRACKET) return skipSpace(bytes, i + 1) === bytes.length ? replies : undefined;
    if (bytes[i] !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1);
  }
}

/** Where the object opening at `start` ends (one past its closing brace), strings and nesting followed; undefined if it does not. */
function objectEnd(bytes: Buffer, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** The closing quote of the string opening at `start`, or -1. Found natively: the strings are most of the bytes (hex). */
function stringEnd(bytes: Buffer, start: number): number {
  for (let at = start; ; ) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    // Escaped by an odd run of backslashes before it (\" is a quote, \\" ends the string).
    let slashes = 0;
    while (bytes[at - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

function skipSpace(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  return i;
}
