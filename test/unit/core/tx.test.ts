import { describe, expect, it } from 'vitest';
import { parseBlock, parseTransaction, serializeTransaction, size, txid, vsize, weight, wtxid } from '../../../src/core/tx.js';
import { toHex } from '../../../src/core/bytes.js';
import { loadFixture } from '../../support/fixtures.js';

describe('transactions', () => {
  it('parses every fixture block, with the block hash Bitcoin Core gave, and re-serialises each transaction byte for byte', () => {
    const blocks = loadFixture<Record<string, { hex: string; prev: string; time: number }>>('blocks');
    for (const [hash, block] of Object.entries(blocks)) {
      const parsed = parseBlock(block.hex);
      expect(parsed.hash).toBe(hash);
      expect(parsed.time).toBe(block.time);
      if (block.prev) expect(parsed.prevHash).toBe(block.prev);
      for (const tx of parsed.transactions) {
        expect(toHex(serializeTransaction(parseTransaction(serializeTransaction(tx))))).toBe(toHex(serializeTransaction(tx)));
      }
    }
  });

  it('computes txid, wtxid, size, vsize and weight as Bitcoin Core does', () => {
    const rpc = loadFixture('rpc');
    const sample = rpc.samples.find((s: any) => s.method === 'getrawtransaction' && s.result);
    const tx = parseTransaction(sample.result.hex);
    expect(txid(tx)).toBe(sample.result.txid);
    expect(wtxid(tx)).toBe(sample.result.hash);
    expect(size(tx)).toBe(sample.result.size);
    expect(vsize(tx)).toBe(sample.result.vsize);
    expect(weight(tx)).toBe(sample.result.weight);
  });

  it('refuses truncated, trailing and non-hex input with a typed error', () => {
    expect(() => parseTransaction('0200')).toThrow(/truncated/);
    expect(() => parseTransaction('zz')).toThrow(/Not hex/);
    const rpc = loadFixture('rpc');
    const hex = rpc.samples.find((s: any) => s.method === 'getrawtransaction' && s.result).result.hex;
    expect(() => parseTransaction(hex + '00')).toThrow(/Trailing/);
  });
});
