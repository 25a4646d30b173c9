import { describe, expect, it } from 'vitest';
import { fromHex } from '../../../src/core/bytes.js';
import {
  dustThreshold,
  estimateTransactionSize,
  estimateVsize,
  inputVsize,
  isDust,
  outputVsize,
  SizeError,
  type InputType,
} from '../../../src/core/size.js';
import { parseBlock, parseTransaction, txid, vsize, type Transaction } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

/** The input type of each fixture wallet, from its type and threshold in wallets.json. */
function walletInputType(wallet: { type: string; sigs_required: number; keys: unknown[] }): InputType {
  const m = wallet.sigs_required;
  const n = wallet.keys.length;
  switch (wallet.type) {
    case 'pkh':
    case 'wpkh':
    case 'sh-wpkh':
    case 'tr':
      return { kind: wallet.type };
    case 'wsh-multi':
    case 'wsh-sortedmulti':
      return { kind: 'wsh-multi', m, n };
    case 'sh-wsh-multi':
    case 'sh-wsh-sortedmulti':
      return { kind: 'sh-wsh-multi', m, n };
    default:
      throw new Error(`fixture wallet type ${wallet.type} not mapped`);
  }
}

const wallets = loadFixture<Record<string, any>>('wallets');
const psbts = loadFixture<Record<string, any>>('psbts');

function estimateFor(tx: Transaction, type: InputType): number {
  return estimateVsize(
    tx.inputs.map(() => type),
    tx.outputs.map((o) => o.script),
  );
}

/** Signed transactions of the timeline whose every input belongs to one known wallet. */
function timelineTransactions(): { what: string; wallet: string; tx: Transaction }[] {
  const byTxid = new Map<string, Transaction>();
  for (const block of Object.values(loadFixture<Record<string, { hex: string }>>('blocks'))) {
    for (const tx of parseBlock(block.hex).transactions) byTxid.set(txid(tx), tx);
  }
  const timeline = loadFixture('timeline');
  for (const snapshot of timeline.snapshots) for (const entry of snapshot.mempool) byTxid.set(entry.txid, parseTransaction(entry.hex));
  const walletOfTxid = new Map<string, string>();
  const found: { what: string; wallet: string; tx: Transaction }[] = [];
  for (const event of timeline.events) {
    // "w_x pays ..." is funded from that wallet's coins; a replacement spends the original's inputs.
    const wallet = /^(w_\w+) pays/.exec(event.what)?.[1] ?? (event.replaces ? walletOfTxid.get(event.replaces) : undefined);
    if (!wallet) continue;
    walletOfTxid.set(event.txid, wallet);
    const tx = byTxid.get(event.txid);
    if (tx) found.push({ what: event.what, wallet, tx });
  }
  return found;
}

describe('size estimation against signed fixture transactions', () => {
  it('never underestimates a finalized PSBT transaction, and overestimates by at most 1 vbyte per input', () => {
    const checked: string[] = [];
    for (const [name, entry] of Object.entries(psbts)) {
      if (name.startsWith('_')) continue;
      const tx = parseTransaction(entry.final.hex);
      const estimate = estimateFor(tx, walletInputType(wallets[name]));
      const real = vsize(tx);
      expect(real).toBe(entry.final.decoded.vsize);
      expect(estimate, name).toBeGreaterThanOrEqual(real);
      expect(estimate - real, name).toBeLessThanOrEqual(tx.inputs.length);
      checked.push(wallets[name].type);
    }
    expect(new Set(checked)).toEqual(new Set(['pkh', 'wpkh', 'sh-wpkh', 'tr', 'wsh-sortedmulti', 'sh-wsh-sortedmulti', 'wsh-multi']));
  });

  it('agrees exactly with the size Bitcoin Core charged when it funded each PSBT at 5 sat/vB', () => {
    for (const [name, entry] of Object.entries(psbts)) {
      if (name.startsWith('_')) continue;
      expect(entry.request.fee_rate_sat_vb).toBe(5);
      const feeSats = Math.round(entry.fee_btc * 1e8); // fixture value, only compared, never used as money
      const tx = parseTransaction(entry.final.hex);
      expect(estimateFor(tx, walletInputType(wallets[name])) * 5, name).toBe(feeSats);
    }
  });

  it('never underestimates the signed payments of every wallet in the timeline blocks and mempools', () => {
    const found = timelineTransactions();
    expect(new Set(found.map((f) => f.wallet))).toEqual(new Set(Object.keys(wallets)));
    for (const { what, wallet, tx } of found) {
      const estimate = estimateFor(tx, walletInputType(wallets[wallet]));
      const real = vsize(tx);
      expect(estimate, what).toBeGreaterThanOrEqual(real);
      expect(estimate - real, what).toBeLessThanOrEqual(tx.inputs.length);
    }
  });

  it('counts output sizes exactly for every script type of the mixed-output PSBT', () => {
    const misc = psbts._misc.output_types;
    const tx = parseTransaction(unsignedTxOfPsbt(misc.psbt));
    expect(txid(tx)).toBe(misc.decoded.tx.txid);
    // Unsigned: no witness, empty scriptSigs. Version, counts, inputs, outputs, locktime.
    const inputs = tx.inputs.length * (32 + 4 + 1 + 4);
    const outputs = tx.outputs.reduce((sum, o) => sum + outputVsize(o.script), 0);
    expect(4 + 1 + inputs + 1 + outputs + 4).toBe(misc.decoded.tx.vsize);
    expect(tx.outputs.length).toBe(5);
  });
});

/** The unsigned transaction inside a base64 PSBT v0 (its first global record, key type 0x00). */
function unsignedTxOfPsbt(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  expect([bytes[5], bytes[6]]).toEqual([1, 0]); // key length 1, key type PSBT_GLOBAL_UNSIGNED_TX
  let offset = 7;
  let length = bytes[offset]!;
  offset += 1;
  if (length === 0xfd) {
    length = bytes[offset]! | (bytes[offset + 1]! << 8);
    offset += 2;
  }
  return bytes.subarray(offset, offset + length).toString('hex');
}

describe('per-input and per-output sizes', () => {
  it('gives Bitcoin Core`s per-input virtual sizes with 72-byte ECDSA and 64-byte Schnorr signatures', () => {
    expect(inputVsize({ kind: 'pkh' })).toBe(149); // 148 bytes, plus the empty witness count in a segwit tx
    expect(inputVsize({ kind: 'wpkh' })).toBe(68);
    expect(inputVsize({ kind: 'sh-wpkh' })).toBe(91);
    expect(inputVsize({ kind: 'tr' })).toBe(58);
    expect(inputVsize({ kind: 'wsh-multi', m: 2, n: 3 })).toBe(105);
    expect(inputVsize({ kind: 'sh-wsh-multi', m: 2, n: 3 })).toBe(140);
    expect(inputVsize({ kind: 'wsh-multi', m: 1, n: 1 })).toBe(Math.ceil((41 * 4 + 1 + 1 + 73 + 1 + 37) / 4));
    // sh 2-of-3: OP_0, 2 x (push 72), PUSHDATA1 105-byte script = 254-byte scriptSig,
    // whose length needs 3 bytes (over 252).
    expect(inputVsize({ kind: 'sh-multi', m: 2, n: 3 })).toBe(Math.ceil(((40 + 3 + 1 + 146 + 107) * 4 + 1) / 4));
  });

  it('uses 3-byte lengths for big scripts and 2-byte pushes for thresholds over 16', () => {
    // sh 15-of-15: script 1+15*34+1+1 = 513 bytes (PUSHDATA2), scriptSig 1 + 15*73 + 516 = 1612 (3-byte length).
    expect(inputVsize({ kind: 'sh-multi', m: 15, n: 15 })).toBe(Math.ceil(((40 + 3 + 1612) * 4 + 1) / 4));
    // wsh 17-of-20: script 2 + 20*34 + 2 + 1 = 685 bytes (3-byte item length); 19 items.
    const witness = 1 + 1 + 17 * 73 + 3 + 685;
    expect(inputVsize({ kind: 'wsh-multi', m: 17, n: 20 })).toBe(Math.ceil((41 * 4 + witness) / 4));
  });

  it('counts the segwit marker and flag once, and only when some input is segwit', () => {
    const legacy = estimateTransactionSize([{ kind: 'pkh' }, { kind: 'pkh' }], [25]);
    expect(legacy.weight).toBe((4 + 1 + 2 * 148 + 1 + 34 + 4) * 4);
    const mixed = estimateTransactionSize([{ kind: 'pkh' }, { kind: 'wpkh' }], [25]);
    // marker+flag 2, the legacy input's empty witness 1, the wpkh witness 108
    expect(mixed.weight).toBe((4 + 1 + 148 + 41 + 1 + 34 + 4) * 4 + 2 + 1 + 108);
    expect(mixed.vsize).toBe(Math.ceil(mixed.weight / 4));
  });

  it('sizes outputs by any script length', () => {
    expect(outputVsize(fromHex('0014' + '00'.repeat(20)))).toBe(31);
    expect(outputVsize(34)).toBe(43);
    expect(outputVsize(0)).toBe(9);
    expect(outputVsize(253)).toBe(8 + 3 + 253);
  });

  it('refuses impossible input types with a typed error', () => {
    expect(() => inputVsize({ kind: 'wsh-multi', m: 3, n: 2 })).toThrow(SizeError);
    expect(() => inputVsize({ kind: 'wsh-multi', m: 1, n: 21 })).toThrow(SizeError);
    expect(() => inputVsize({ kind: 'sh-multi', m: 1, n: 16 })).toThrow(/15 compressed keys/);
    expect(() => inputVsize({ kind: 'p2pk' } as unknown as InputType)).toThrow(SizeError);
    expect(() => outputVsize(-1)).toThrow(SizeError);
  });
});

describe('dust threshold (Bitcoin Core GetDustThreshold at 3 sat/vB)', () => {
  const script = (hex: string) => fromHex(hex);
  const cases: [string, string, bigint][] = [
    ['P2PKH', '76a914' + '11'.repeat(20) + '88ac', 546n],
    ['P2SH', 'a914' + '11'.repeat(20) + '87', 540n],
    ['P2WPKH', '0014' + '11'.repeat(20), 294n],
    ['P2WSH', '0020' + '11'.repeat(32), 330n],
    ['P2TR', '5120' + '11'.repeat(32), 330n],
    ['OP_RETURN', '6a0568656c6c6f', 0n],
    ['bare OP_RETURN', '6a', 0n],
    ['future witness v2, 2-byte program', '52020000', BigInt((8 + 1 + 4 + 67) * 3)],
  ];
  it.each(cases)('%s', (_name, hex, expected) => {
    expect(dustThreshold(script(hex))).toBe(expected);
  });

  it('treats a non-witness script, a too-long "program" and a huge script as Core does', () => {
    expect(dustThreshold(fromHex('0029' + '11'.repeat(41)))).toBe(BigInt((8 + 1 + 43 + 148) * 3)); // 41-byte program: not witness
    expect(dustThreshold(new Uint8Array(10_001))).toBe(0n); // unspendable
    expect(dustThreshold(new Uint8Array(0))).toBe(BigInt((8 + 1 + 148) * 3));
  });

  it('scales with the dust relay fee, rounding up', () => {
    expect(dustThreshold(script('0014' + '11'.repeat(20)), 1000n)).toBe(98n);
    expect(dustThreshold(script('0014' + '11'.repeat(20)), 1001n)).toBe(99n); // 98.098 -> 99
  });

  it('isDust compares strictly below the threshold', () => {
    const p2wpkh = script('0014' + '11'.repeat(20));
    expect(isDust(p2wpkh, 293n)).toBe(true);
    expect(isDust(p2wpkh, 294n)).toBe(false);
  });
});
