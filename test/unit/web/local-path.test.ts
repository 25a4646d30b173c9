/** Paths a redirect may follow: whatever text comes in, what goes out is a same-origin path safe as a Location header. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { localPath } from '../../../src/web/local-path.js';

/** How a browser reads a Location path: tabs and line breaks dropped, backslashes as slashes. */
const asBrowserReads = (path: string) => path.replace(/[\t\n\r]/g, '').replace(/\\/g, '/');

function expectSafe(path: string): void {
  expect(path).toMatch(/^\/[\x21-\x7e]*$/);
  for (const form of [path, decodeURIComponent(path)]) {
    expect(asBrowserReads(form).startsWith('//')).toBe(false);
    expect(form).not.toMatch(/[\p{Cc}\p{Cf}\p{Z}\s\\]/u);
  }
}

describe('localPath', () => {
  it('refuses what a browser would take to another host, and text that is no path', () => {
    for (const text of ['/\t/evil/', '/%09/evil/', '/\n/evil', '/%0a', '/\\evil', '/%5cevil', '//evil', '/%2F%2Fevil', '/%2fevil', 'https://evil', 'evil', '', '/%E0%A4%A', '/\u2028', '/\u00a0', '/\u200b', '/\ud800', '/a b', '/a/../..//evil']) {
      expect(localPath(text), JSON.stringify(text)).toBeUndefined();
    }
    expect(localPath(undefined)).toBeUndefined();
    expect(localPath(['/'])).toBeUndefined();
  });

  it('keeps a path of this service, percent-encoding what is past ASCII', () => {
    expect(localPath('/')).toBe('/');
    expect(localPath('/wallets/shop?view=coins&page=2')).toBe('/wallets/shop?view=coins&page=2');
    expect(localPath('/€')).toBe('/%E2%82%AC');
    expect(localPath('/wallets/café')).toBe('/wallets/caf%C3%A9');
    expect(localPath('/wallets/caf%C3%A9')).toBe('/wallets/caf%C3%A9');
  });

  it('answers, for any text, nothing or a path safe to send as a Location', () => {
    const pieces = fc.constantFrom('/', '//', '\\', '%2F', '%5C', '%09', '%0A', '\t', '\n', ' ', '€', 'é', '\u2028', '\u00a0', 'a', '?', '#', '%', 'http:', '%25');
    fc.assert(
      fc.property(fc.oneof(fc.array(pieces).map((p) => p.join('')), fc.string({ unit: 'binary' })), (text) => {
        const path = localPath(text);
        if (path !== undefined) expectSafe(path);
      }),
      { numRuns: 1000 },
    );
  });
});
