/**
 * What free text (names, labels, descriptions) may hold, from whatever source it comes: API bodies, web
 * forms, label files, wallet setup files, command-line arguments. Refused: C0 and C1 control characters,
 * DEL, and the bidirectional marks, embeddings, overrides and isolates. They let a name rewrite the
 * terminal or the page it is shown on (escape sequences, forged lines, text shown in reverse order), and
 * PostgreSQL cannot store NUL at all. Refused too: private key material, a secret that would be shown to
 * everyone the wallet is shared with.
 */
import { containsPrivateKey, hidePrivateKeys } from './keys/private-key.js';

/** Every character refused in single-line text (TAB and line breaks included). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, for the one quick test most text passes. */
const ANY_CONTROL = new RegExp(CONTROL_CHARACTERS.source);
const MULTI_LINE_ALLOWED = new Set(['\t', '\n', '\r']);

export interface TextOptions {
  /** Free text of several lines (descriptions): TAB, LF and CR are allowed. */
  multiline?: boolean;
}

/** `U+202E` */
export const codePointName = (character: string): string => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first refused character of `text` and its 1-based position, or undefined. */
export function firstControlCharacter(text: string, options: TextOptions = {}): { character: string; position: number } | undefined {
  if (!ANY_CONTROL.test(text)) return undefined;
  for (const match of text.matchAll(CONTROL_CHARACTERS)) {
    if (options.multiline && MULTI_LINE_ALLOWED.has(match[0])) continue;
    return { character: match[0], position: match.index + 1 };
  }
  return undefined;
}

/** Why `text` cannot be a name, label or description (a phrase after the field's name), or undefined when it can. */
export function textProblem(text: string, options: TextOptions = {}): string | undefined {
  const found = firstControlCharacter(text, options);
  if (found) return `must not contain control or bidirectional characters (${codePointName(found.character)} at character ${found.position})`;
  if (containsPrivateKey(text)) return 'must not contain private key material (an extended private key or a WIF key); give public keys only';
  return undefined;
}

/**
 * Input quoted in an error message: at most `maxChars` characters, private keys hidden. Errors are logged and
 * shown; they must not carry a secret someone pasted by mistake.
 */
export const quoteInput = (text: string, maxChars: number): string => `"${hidePrivateKeys(text).slice(0, maxChars)}"`;
