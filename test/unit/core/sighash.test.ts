/** Signature hashes against the official vectors: BIP143 (witness v0) and BIP341 (taproot key path), plus a legacy P2PK input. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { parseTransaction, type Transaction } from '../../../src/core/tx.js';
import { legacySighash, segwitV0Sighash, taprootKeyPathSighash, taprootSigMsg, SighashError } from '../../../src/core/signing/sighash.js';
import { checkEcdsaSignature, checkSchnorrSignature } from '../../../src/core/signing/signature.js';
import { verifyTransaction } from '../../../src/core/signing/verify.js';
import { pushData } from '../../../src/core/psbt/finalize.js';

const vector = (name: string) => JSON.parse(readFileSync(new URL(`../../vectors/${name}`, import.meta.url), 'utf8'));
const bip143 = vector('bip143-sighash.json');
const bip341 = vector('bip341-keypath-sighash.json');

/** The unsigned form of a signed transaction (what a signature hash commits to). */
const unsigned = (tx: Transaction): Transaction => ({ ...tx, inputs: tx.inputs.map((i) => ({ ...i, scriptSig: new Uint8Array(0), witness: [] })) });

describe('BIP143 signature hashes', () => {
  for (const v of bip143.sighashes) {
    it(v.name, () => {
      const tx = v.unsignedTx ? parseTransaction(v.unsignedTx) : unsigned(parseTransaction(v.signedTx));
      const hash = segwitV0Sighash(tx, v.inputIndex, fromHex(v.scriptCode), BigInt(v.amount), v.hashType);
      expect(toHex(hash)).toBe(v.sigHash);
      expect(checkEcdsaSignature(fromHex(v.signature), hash, fromHex(v.pubkey))).toBeUndefined();
      // Any other amount gives another hash, and the signature no longer verifies.
      const other = segwitV0Sighash(tx, v.inputIndex, fromHex(v.scriptCode), BigInt(v.amount) + 1n, v.hashType);
      expect(checkEcdsaSignature(fromHex(v.signature), other, fromHex(v.pubkey))).toBe('invalid_signature');
    });
  }

  it('P2SH-P2WPKH: the signed transaction verifies against its spent output', () => {
    const v = bip143.sighashes[0];
    const result = verifyTransaction(parseTransaction(v.signedTx), [{ value: BigInt(v.amount), script: fromHex(v.spentScriptPubKey) }]);
    expect(result).toEqual({ valid: true, inputs: [{ index: 0, valid: true, type: 'sh-wpkh' }] });
  });

  describe('P2SH-P2WSH 6-of-6 signed with all six sighash types', () => {
    const v = bip143.p2shP2wsh6of6;
    const tx = parseTransaction(v.unsignedTx);
    for (const s of v.signatures) {
      it(`sighash type 0x${s.hashType.toString(16)}`, () => {
        const hash = segwitV0Sighash(tx, 0, fromHex(v.witnessScript), BigInt(v.amount), s.hashType);
        expect(toHex(hash)).toBe(s.sigHash);
        expect(checkEcdsaSignature(fromHex(s.signature), hash, fromHex(s.pubkey))).toBeUndefined();
      });
    }

    it('the assembled transaction verifies, and fails with any signature swapped or missing', () => {
      const sigs = v.signatures.map((s: any) => fromHex(s.signature));
      const signed = (list: Uint8Array[]): Transaction => ({
        ...tx,
        inputs: [{ ...tx.inputs[0]!, scriptSig: pushData(fromHex(v.redeemScript)), witness: [new Uint8Array(0), ...list, fromHex(v.witnessScript)] }],
      });
      const prevouts = [{ value: BigInt(v.amount), script: fromHex(v.spentScriptPubKey) }];
      expect(verifyTransaction(signed(sigs), prevouts).inputs[0]).toEqual({ index: 0, valid: true, type: 'sh-wsh-multi' });
      expect(verifyTransaction(signed([sigs[1], sigs[0], ...sigs.slice(2)]), prevouts).valid).toBe(false);
      expect(verifyTransaction(signed(sigs.slice(1)), prevouts).valid).toBe(false);
    });
  });

  it('legacy signature hash: the P2PK input of the native P2WSH example', () => {
    const v = bip143.legacyP2pkInput;
    const tx = unsigned(parseTransaction(v.signedTx));
    const hash = legacySighash(tx, v.inputIndex, fromHex(v.scriptPubKey), 1);
    expect(checkEcdsaSignature(fromHex(v.signature), hash, fromHex(v.pubkey))).toBeUndefined();
    expect(checkEcdsaSignature(fromHex(v.signature), legacySighash(tx, v.inputIndex, fromHex(v.scriptPubKey), 2), fromHex(v.pubkey))).toBe(
      'invalid_signature',
    );
  });

  it('legacy SIGHASH_SINGLE without a matching output hashes to one, as Core does', () => {
    const tx = parseTransaction(bip143.sighashes[1].unsignedTx);
    const one = new Uint8Array(32);
    one[0] = 1;
    expect(legacySighash(tx, 1, new Uint8Array(0), 3)).toEqual(one);
  });
});

describe('BIP341 key path signature hashes (wallet-test-vectors keyPathSpending)', () => {
  const tx = parseTransaction(bip341.rawUnsignedTx);
  const prevouts = bip341.utxosSpent.map((u: any) => ({ value: BigInt(u.amountSats), script: fromHex(u.scriptPubKey) }));
  for (const v of bip341.inputSpending) {
    it(`input ${v.txinIndex}, hash type 0x${v.hashType.toString(16)}`, () => {
      expect('00' + toHex(taprootSigMsg(tx, v.txinIndex, prevouts, v.hashType))).toBe(v.sigMsg);
      const hash = taprootKeyPathSighash(tx, v.txinIndex, prevouts, v.hashType);
      expect(toHex(hash)).toBe(v.sigHash);
      const outputKey = prevouts[v.txinIndex].script.subarray(2);
      expect(checkSchnorrSignature(fromHex(v.witness[0]).subarray(0, 64), hash, outputKey)).toBe(true);
    });
  }

  it('the fully signed transaction verifies against its spent outputs (taproot, P2PKH and P2WPKH inputs)', () => {
    const signed = parseTransaction(bip341.fullySignedTx);
    const result = verifyTransaction(signed, prevouts);
    expect(result.inputs.map((i) => i.type)).toEqual(['tr', 'tr', 'pkh', 'tr', 'tr', 'wpkh', 'tr', 'tr', 'tr']);
    expect(result.valid).toBe(true);
    // Taproot signatures commit to every spent amount: changing one breaks every ALL-type taproot input.
    const changed = prevouts.map((p: any, i: number) => (i === 2 ? { ...p, value: p.value + 1n } : p));
    expect(verifyTransaction(signed, changed).inputs[4]!.valid).toBe(false);
  });

  it('refuses undefined hash types and SIGHASH_SINGLE without an output', () => {
    expect(() => taprootSigMsg(tx, 0, prevouts, 0x04)).toThrow(SighashError);
    expect(() => taprootSigMsg(tx, 5, prevouts, 0x03)).toThrow(/SIGHASH_SINGLE/);
    expect(() => taprootSigMsg(tx, 0, prevouts.slice(1), 0x01)).toThrow(/every spent output/);
  });
});

