/** Script asm and scriptPubKey decoding as Bitcoin Core prints them. */
import { describe, expect, it } from 'vitest';
import { fromHex } from '../../../src/core/bytes.js';
import { decodeScriptPubKey, decodeTransaction, scriptToAsm } from '../../../src/core/decode.js';
import { NETWORKS } from '../../../src/core/network.js';
import { decodedValueBtc } from '../../../src/core/amount.js';
import { loadFixture } from '../../support/fixtures.js';
import { parseBlock, serializeTransaction } from '../../../src/core/tx.js';
import { encodeAddress, p2pkhScript } from '../../../src/core/address.js';
import { hash160 } from '../../../src/core/script-type.js';
import { coreTxToOurs } from './psbt-support.js';

const asm = (hex: string, sighash = false) => scriptToAsm(fromHex(hex), sighash);
const sig = '3044022047ac8e878352d3ebbde1c94ce3a10d057c24175747116f8288e5d794d12d482f0220217f36a485cae903c713331d877c1f64677e3622ad4010726870540656fe9dcb';

describe('scriptToAsm', () => {
  it('prints small pushes as numbers and opcodes by their Core names', () => {
    expect(asm('00')).toBe('0');
    expect(asm('4f')).toBe('-1');
    expect(asm('51609f')).toBe('1 16 OP_LESSTHAN');
    expect(asm('0281ff')).toBe('-32641');
    expect(asm('02ff00')).toBe('255');
    expect(asm('0401020304')).toBe('67305985');
    expect(asm('b1b2ba')).toBe('OP_CHECKLOCKTIMEVERIFY OP_CHECKSEQUENCEVERIFY OP_CHECKSIGADD');
    expect(asm('bbff')).toBe('OP_UNKNOWN OP_INVALIDOPCODE');
    expect(asm('4c03aabbcc')).toBe('-5028778');
    expect(asm('4c05aabbccddee')).toBe('aabbccddee');
  });

  it('marks a push running past the end with [error], as Core does', () => {
    expect(asm('51' + '05aabb')).toBe('1 [error]');
    expect(asm('4d01')).toBe('[error]');
  });

  it('decodes the sighash type of signatures in scriptSigs only', () => {
    for (const [byte, name] of [['01', 'ALL'], ['02', 'NONE'], ['03', 'SINGLE'], ['81', 'ALL|ANYONECANPAY'], ['82', 'NONE|ANYONECANPAY'], ['83', 'SINGLE|ANYONECANPAY']]) {
      const push = `47${sig}${byte}`;
      expect(asm(push, true)).toBe(`${sig}[${name}]`);
      expect(asm(push, false)).toBe(`${sig}${byte}`);
    }
    // An undefined sighash type, or an OP_RETURN script, is printed as plain hex.
    expect(asm(`47${sig}04`, true)).toBe(`${sig}04`);
    expect(asm(`6a47${sig}01`, true)).toBe(`OP_RETURN ${sig}01`);
  });
});

describe('decodeScriptPubKey', () => {
  const regtest = NETWORKS.regtest;
  const key = '03ad1d8e89212f0b92c74d23bb710c00662ad1470198ac48c43f7d6f93a2a26873';
  it('names every standard type with reqSigs and addresses', () => {
    expect(decodeScriptPubKey(fromHex(`21${key}ac`), regtest)).toMatchObject({ type: 'pubkey', reqSigs: 1, addresses: [encodeAddress(p2pkhScript(hash160(fromHex(key))), regtest)] });
    expect(decodeScriptPubKey(fromHex(`5121${key}21${key}52ae`), regtest)).toMatchObject({ type: 'multisig', reqSigs: 1 });
    expect(decodeScriptPubKey(fromHex('6a0548656c6c6f'), regtest)).toEqual({ asm: 'OP_RETURN 48656c6c6f', hex: '6a0548656c6c6f', type: 'nulldata' });
    expect(decodeScriptPubKey(fromHex('51024e73'), regtest)).toMatchObject({ type: 'anchor', reqSigs: 1, addresses: ['bcrt1pfeesnyr2tx'] });
    expect(decodeScriptPubKey(fromHex('5210' + '00'.repeat(16)), regtest)).toMatchObject({ type: 'witness_unknown', reqSigs: 1 });
    expect(decodeScriptPubKey(fromHex('ac'), regtest)).toEqual({ asm: 'OP_CHECKSIG', hex: 'ac', type: 'nonstandard' });
  });
});

describe('decodeTransaction', () => {
  it('shows coinbase inputs as Core does (coinbase hex, witness, sequence)', () => {
    const blocks = loadFixture<Record<string, { hex: string; height: number }>>('blocks');
    const block = Object.values(blocks).reduce((a, b) => (b.height > a.height ? b : a));
    const coinbase = parseBlock(block.hex).transactions[0]!;
    const decoded = decodeTransaction(serializeTransaction(coinbase), NETWORKS.regtest);
    expect(Object.keys(decoded.vin[0]!)).toEqual(coinbase.inputs[0]!.witness.length ? ['coinbase', 'txinwitness', 'sequence'] : ['coinbase', 'sequence']);
    expect((decoded.vin[0] as { coinbase: string }).coinbase).toMatch(/^[0-9a-f]+$/);
  });

  it('prints BTC values exactly as Core text would read', () => {
    expect(decodedValueBtc(10_000_000n)).toBe(0.1);
    expect(decodedValueBtc(19_999_433n)).toBe(0.19999433);
    expect(decodedValueBtc(1_160n)).toBe(1.16e-5);
    expect(decodedValueBtc(2_100_000_000_000_000n)).toBe(21000000);
    expect(decodedValueBtc(-1n)).toBe(-1e-8);
  });
});

describe('decodeTransaction against Bitcoin Core (rpc.json getblock verbosity 2, getrawtransaction verbose)', () => {
  const rpc = loadFixture('rpc');
  const coreTxs: any[] = [];
  const block = rpc.samples.find((s: any) => s.method === 'getblock' && s.params[1] === 2)!.result;
  coreTxs.push(...block.tx);
  coreTxs.push(rpc.samples.find((s: any) => s.method === 'getrawtransaction' && s.result)!.result);

  it(`decodes all ${coreTxs.length} transactions, coinbase included, member for member`, () => {
    expect(coreTxs.length).toBeGreaterThan(1);
    for (const core of coreTxs) {
      const ours: any = decodeTransaction(core.hex, NETWORKS.regtest);
      const expected = coreTxToOurs(core);
      for (const key of ['txid', 'hash', 'version', 'size', 'vsize', 'weight', 'locktime', 'vin', 'vout']) {
        expect({ key, value: ours[key] }).toEqual({ key, value: expected[key] });
      }
    }
  });
});
