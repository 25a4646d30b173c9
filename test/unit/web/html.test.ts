/** The escaping template, exact amounts and the splitting of pasted PSBT copies. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { btcText, satText } from '../../../src/web/format.js';
import { escapeHtml, html, trusted } from '../../../src/web/html.js';
import { splitPsbtCopies } from '../../../src/web/pages/psbt.js';

describe('html', () => {
  it('escapes every interpolated text, in element content and in attributes', () => {
    const label = `<script>alert("x")</script>' onmouseover='y' &amp;`;
    const out = html`<p title="${label}">${label}</p>`.text;
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp;amp;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp;amp;</p>',
    );
  });

  it('keeps markup built by html itself, joins lists and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.text).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${trusted('<svg></svg>')}`.text).toBe('<svg></svg>');
  });

  it('never lets a text produce a tag or end an attribute', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const out = escapeHtml(text);
        expect(out).not.toMatch(/[<>"']/);
      }),
    );
  });
});

describe('amounts', () => {
  it('shows BTC exactly from satoshis, negative too', () => {
    expect(btcText(0)).toBe('0.00000000');
    expect(btcText(1)).toBe('0.00000001');
    expect(btcText(123_456_789n)).toBe('1.23456789');
    expect(btcText(-100_000_000)).toBe('-1.00000000');
    expect(btcText(2_100_000_000_000_000n)).toBe('21000000.00000000');
    expect(satText(1_234_567)).toBe('1,234,567');
  });
});

describe('pasted PSBT copies', () => {
  it('splits copies on whitespace and joins wrapped lines of one copy', () => {
    expect(splitPsbtCopies('  cHNidP8AAA\ncHNidP8BBB  ')).toEqual(['cHNidP8AAA', 'cHNidP8BBB']);
    expect(splitPsbtCopies('cHNidP8AAAA\nBBBB\r\nCC==\n\ncHNidP8DD')).toEqual(['cHNidP8AAAABBBBCC==', 'cHNidP8DD']);
    expect(splitPsbtCopies(' \n ')).toEqual([]);
    expect(splitPsbtCopies('garbage')).toEqual(['garbage']);
  });
});
