import { describe, expect, it } from 'vitest';
import { parseBlock, parseTransaction, parseTransactionWithTxid, serializeTransaction, size, txid, vsize, weight, wtxid } from '../../../src/core/tx.js';
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

  it('hashes the txid from the given bytes (witness stripped) as Bitcoin Core does, for every fixture transaction', () => {
    const blocks = loadFixture<Record<string, { hex: string }>>('blocks');
    let segwit = 0;
    let legacy = 0;
    for (const block of Object.values(blocks)) {
      for (const tx of parseBlock(block.hex).transactions) {
        const hex = toHex(serializeTransaction(tx));
        const parsed = parseTransactionWithTxid(hex);
        expect(parsed.txid).toBe(txid(tx));
        expect(toHex(serializeTransaction(parsed.tx))).toBe(hex);
        if (tx.inputs.some((i) => i.witness.length > 0)) segwit++;
        else legacy++;
      }
    }
    expect(segwit).toBeGreaterThan(0);
    expect(legacy).toBeGreaterThan(0);
    const rpc = loadFixture('rpc');
    const sample = rpc.samples.find((s: any) => s.method === 'getrawtransaction' && s.result);
    expect(parseTransactionWithTxid(sample.result.hex).txid).toBe(sample.result.txid);
    expect(() => parseTransactionWithTxid(sample.result.hex + '00')).toThrow(/Trailing/);
  });

  it('refuses truncated, trailing and non-hex input with a typed error', () => {
    expect(() => parseTransaction('0200')).toThrow(/truncated/);
    expect(() => parseTransaction('zz')).toThrow(/Not hex/);
    const rpc = loadFixture('rpc');
    const hex = rpc.samples.find((s: any) => s.method === 'getrawtransaction' && s.result).result.hex;
    expect(() => parseTransaction(hex + '00')).toThrow(/Trailing/);
  });
});
