import { describe, expect, it } from 'vitest';
import { printable, shown } from '../../../src/cli/terminal-text.js';

describe('terminal text', () => {
  it('shows every control and bidirectional character of a value escaped', () => {
    expect(shown('a\u001b[2Jb\u0007c\r\nd\u0000e\u202ef\tg\u007fh\u009bi\u2066')).toBe('a\\x1b[2Jb\\x07c\\x0d\\x0ad\\x00e\\u202ef\\x09g\\u007fh\\u009bi\\u2066');
  });

  it('leaves ordinary text of every script alone', () => {
    for (const text of ['Family vault', '\u05d0\u05e8\u05e0\u05e7', '\u91d1\u5e93 \ud83d\udd10', 'C:\\keys']) expect(shown(text)).toBe(text);
  });

  it('keeps the line breaks and column TABs of a whole output, and JSON valid', () => {
    expect(printable('a\tb\u001b\nc\u202e')).toBe('a\tb\\x1b\nc\\u202e');
    const json = printable(JSON.stringify({ name: 'x\u202ey\u007f\u001b' }, null, 2));
    expect(JSON.parse(json)).toEqual({ name: 'x\u202ey\u007f\u001b' });
    for (const raw of ['\u001b', '\u007f', '\u202e']) expect(json).not.toContain(raw);
  });
});
