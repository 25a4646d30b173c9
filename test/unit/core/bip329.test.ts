/** BIP329 JSON Lines: BIP329's own example reads line by line; faults are named by line; writing round-trips. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readBip329, writeBip329 } from '../../../src/core/bip329.js';
import { NETWORKS } from '../../../src/core/network.js';

const example = readFileSync(new URL('../../vectors/bip329/bip329-example.jsonl', import.meta.url), 'utf8');
const mainnet = { network: NETWORKS.mainnet, maxLabelChars: 255, maxLines: 1000 };

describe('BIP329', () => {
  it('reads every line of the BIP’s example, keeping types it does not apply', () => {
    const { records, errors } = readBip329(example, mainnet);
    expect(errors).toEqual([]);
    expect(records.map((r) => r.type)).toEqual(['tx', 'addr', 'pubkey', 'input', 'output', 'xpub', 'spscan', 'tx']);
    expect(records[0]).toMatchObject({ line: 1, label: 'Transaction', origin: "wpkh([d34db33f/84'/0'/0'])" });
    expect(records[4]).toMatchObject({ type: 'output', spendable: false });
  });

  it('names every faulty line, with the reason', () => {
    const text = [
      '{"type":"tx","ref":"zz","label":"a"}',
      '[1]',
      '{"type":"addr","ref":"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx","label":"testnet address"}',
      '{"type":"tx","ref":"' + 'a'.repeat(64) + '","label":7}',
      '{"type":"tx","ref":"' + 'a'.repeat(64) + '","spendable":true}',
      '{"type":"output","ref":"' + 'a'.repeat(64) + ':1","modified":"yesterday"}',
      '{"type":"tx","ref":"' + 'a'.repeat(64) + '","label":"' + 'x'.repeat(256) + '"}',
      '',
      '{"type":"tx","ref":"' + 'a'.repeat(64) + '","label":"fine","modified":"2025-01-23T11:40:35Z"}',
    ].join('\n');
    const { records, errors } = readBip329(text, mainnet);
    expect(errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(errors[2]!.message).toMatch(/mainnet|network/i);
    expect(records).toEqual([{ line: 9, type: 'tx', ref: 'a'.repeat(64), label: 'fine', modified: Date.parse('2025-01-23T11:40:35Z') }]);
  });

  it('writes one object per line that reads back the same', () => {
    const written = writeBip329([
      { type: 'tx', ref: 'a'.repeat(64), label: 'Rent', modified: 1_700_000_000_000 },
      { type: 'output', ref: `${'b'.repeat(64)}:0`, label: '', spendable: false, modified: 0 },
    ]);
    expect(written.split('\n')).toHaveLength(3);
    const { records, errors } = readBip329(written, mainnet);
    expect(errors).toEqual([]);
    expect(records).toEqual([
      { line: 1, type: 'tx', ref: 'a'.repeat(64), label: 'Rent', modified: 1_700_000_000_000 },
      { line: 2, type: 'output', ref: `${'b'.repeat(64)}:0`, label: '', spendable: false },
    ]);
  });
});
