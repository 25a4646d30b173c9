import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBlockForScan, scriptLookupKey } from '../../../src/core/block.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { parseBlock, serializeTransaction, txid, type Transaction } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

const blocks = Object.entries(loadFixture<Record<string, { hex: string; prev: string | null; time: number }>>('blocks'));
const plain = (tx: Transaction) => ({ version: tx.version, locktime: tx.locktime, inputs: tx.inputs, outputs: tx.outputs });
/** parseBlock's outcome: the block, or the message it refused it with. */
const outcome = (parse: () => { hash: string; prevHash: string; time: number; transactions: Transaction[] }) => {
  try {
    const block = parse();
    return { hash: block.hash, prevHash: block.prevHash, time: block.time, transactions: block.transactions.map(plain) };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

describe('blocks parsed for scanning', () => {
  it('equal parseBlock on every fixture block: header, inputs, outputs, txids and standalone copies', () => {
    let outputs = 0;
    for (const [hash, block] of blocks) {
      const bytes = fromHex(block.hex);
      const full = parseBlock(bytes);
      const scanned = parseBlockForScan(bytes);
      expect(scanned.hash).toBe(hash);
      expect(outcome(() => scanned)).toEqual(outcome(() => full));
      scanned.transactions.forEach((tx, i) => {
        expect(tx.txid()).toBe(txid(full.transactions[i]!));
        expect(toHex(serializeTransaction(tx.standalone()))).toBe(toHex(serializeTransaction(full.transactions[i]!)));
        outputs += tx.outputs.length;
      });
    }
    expect(outputs).toBeGreaterThan(blocks.length);
  });

  it('finds an output by its script key without decoding the outputs, and no key that is not there', () => {
    for (const [, block] of blocks) {
      for (const tx of parseBlockForScan(fromHex(block.hex)).transactions) {
        const keys = new Set(tx.outputs.map((o) => scriptLookupKey(o.script)));
        const fresh = parseBlockForScan(fromHex(block.hex)).transactions.find((t) => t.txid() === tx.txid())!;
        for (const key of keys) expect(fresh.anyOutputKeyIn(new Set([key]))).toBe(true);
        expect(fresh.anyOutputKeyIn(new Set([...keys].map((k) => k ^ 1).filter((k) => !keys.has(k))))).toBe(false);
      }
    }
  });

  it('refuses exactly what parseBlock refuses: cut-off, extended and altered blocks', () => {
    fc.assert(
      fc.property(fc.nat(blocks.length - 1), fc.nat(), fc.nat(255), fc.constantFrom('cut', 'extend', 'alter'), (b, at, value, how) => {
        const bytes = fromHex(blocks[b]![1].hex);
        const i = at % bytes.length;
        let changed: Uint8Array;
        if (how === 'cut') changed = bytes.slice(0, i);
        else if (how === 'extend') changed = Uint8Array.of(...bytes, value);
        else {
          changed = bytes.slice();
          changed[i] = value;
        }
        expect(outcome(() => parseBlockForScan(changed))).toEqual(outcome(() => parseBlock(changed)));
      }),
      { numRuns: 400 },
    );
  });

  it('keys equal scripts equally, whatever their length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.uint8Array({ maxLength: 8 }), (script, prefix) => {
        const inside = Uint8Array.of(...prefix, ...script, 7);
        expect(scriptLookupKey(inside, prefix.length, prefix.length + script.length)).toBe(scriptLookupKey(script));
        expect(scriptLookupKey(script)).toBeLessThan(2 ** 30);
        expect(scriptLookupKey(script)).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});
