/**
 * Paths a redirect may follow when a request names where to go next (`next` after sign-in, `back`
 * after a small action): only a path of this service. Browsers drop tabs and line breaks inside a URL
 * and read a backslash as a slash, so `/<TAB>/evil` or `/\evil` would leave for another host; a path is
 * refused when it, or its percent-decoded form, holds any of those or starts with two slashes.
 */

/** Control characters, whitespace of any kind (Unicode too), invisible format characters, lone surrogates, backslashes. */
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\p{Z}\s\\]/u;

function hasSafeShape(path: string): boolean {
  return path.startsWith('/') && !path.includes('//') && !UNSAFE_CHARACTER.test(path);
}

/**
 * The path ready for a `Location` header (characters past ASCII percent-encoded), or undefined when the
 * text is not a path of this service.
 */
export function localPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return undefined; // a malformed escape: not a path this service wrote
  }
  if (!hasSafeShape(value) || !hasSafeShape(decoded)) return undefined;
  // Whatever remains past ASCII is text of a path segment or query: percent-encoded, never a raw header byte.
  return value.replace(/[^\x21-\x7e]+/gu, (text) => encodeURIComponent(text));
}
