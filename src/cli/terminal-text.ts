/**
 * What `wcs` writes to a terminal: user-controlled text (wallet names, aliases, labels, user names,
 * descriptions, messages quoting them) with every control and bidirectional character shown as an escape
 * (`\x1b`, `\u202e`), so that stored text, old data included, can neither send escape sequences to the
 * operator's terminal nor forge lines or columns. The characters are those core/text.ts refuses as input.
 */
import { CONTROL_CHARACTERS } from '../core/text.js';

/** C0 controls as `\xNN`; DEL, C1 and the bidirectional marks as `\uNNNN`, which JSON reads back too. */
const escapeOf = (character: string): string => {
  const code = character.codePointAt(0)!;
  return code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One value in a line of output (a field of a tab-separated row, a name in a message): TAB and line breaks escaped too. */
export const shown = (text: string): string => text.replace(CONTROL_CHARACTERS, escapeOf);

/**
 * A whole output of one or more lines, as written: its own line breaks and column TABs stay, everything else
 * is escaped. JSON output stays valid JSON (JSON.stringify already escapes C0 inside strings).
 */
export const printable = (text: string): string => text.replace(CONTROL_CHARACTERS, (c) => (c === '\n' || c === '\t' ? c : escapeOf(c)));
