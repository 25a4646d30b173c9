/** What names and labels may hold (core/text.ts) and where private keys are found and hidden (core/keys/private-key.ts). */
import { createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { HDKey } from '@scure/bip32';
import { describe, expect, it } from 'vitest';
import { containsPrivateKey, hidePrivateKeys, isWifKey } from '../../../src/core/keys/private-key.js';
import { firstControlCharacter, quoteInput, textProblem } from '../../../src/core/text.js';

const base58check = createBase58check(sha256);
const seed = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const TESTNET_VERSIONS = { private: 0x04358394, public: 0x043587cf };
const xprv = HDKey.fromMasterSeed(seed).privateExtendedKey;
const tprv = HDKey.fromMasterSeed(seed, TESTNET_VERSIONS).privateExtendedKey;
const tpub = HDKey.fromMasterSeed(seed, TESTNET_VERSIONS).publicExtendedKey;
const wif = (version: number, compressed: boolean) => base58check.encode(Uint8Array.of(version, ...seed, ...(compressed ? [1] : [])));

describe('textProblem: control and bidirectional characters', () => {
  it.each([
    ['NUL', '\u0000'],
    ['BEL', '\u0007'],
    ['TAB', '\t'],
    ['LF', '\n'],
    ['CR', '\r'],
    ['ESC', '\u001b'],
    ['DEL', '\u007f'],
    ['C1 CSI', '\u009b'],
    ['NEL', '\u0085'],
    ['RLO', '\u202e'],
    ['LRE', '\u202a'],
    ['LRI', '\u2066'],
    ['PDI', '\u2069'],
    ['LRM', '\u200e'],
    ['RLM', '\u200f'],
    ['ALM', '\u061c'],
  ])('refuses %s in a name, naming its code point and place', (_name, character) => {
    const problem = textProblem(`Vault${character}x`);
    expect(problem).toContain(`U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at character 6`);
  });

  it('accepts letters of every script, emoji and punctuation', () => {
    for (const text of ['Family vault', 'Tresor de l\u2019ete', '\u05d0\u05e8\u05e0\u05e7', '\u0645\u062d\u0641\u0638\u0629', '\u91d1\u5e93 \ud83d\udd10', 'a\u200db', 'x/y: #1 (cold)']) {
      expect(textProblem(text)).toBeUndefined();
    }
  });

  it('lets multi-line text keep TAB and line breaks, not other controls', () => {
    expect(textProblem('line one\r\nline\ttwo', { multiline: true })).toBeUndefined();
    expect(firstControlCharacter('ok\n\u001b[2J', { multiline: true })).toEqual({ character: '\u001b', position: 4 });
  });
});

describe('private key material', () => {
  it('finds extended private keys of every network, alone or inside text', () => {
    expect(containsPrivateKey(xprv)).toBe(true);
    expect(containsPrivateKey(tprv)).toBe(true);
    expect(containsPrivateKey(`backup: ${tprv} (cold)`)).toBe(true);
    expect(textProblem(`my key ${tprv}`)).toMatch(/private key/);
    expect(textProblem(`my key ${tprv}`)).not.toContain(tprv.slice(4, 20));
  });

  it('finds WIF keys, compressed or not, mainnet or test networks', () => {
    for (const key of [wif(0x80, true), wif(0x80, false), wif(0xef, true), wif(0xef, false)]) {
      expect(isWifKey(key)).toBe(true);
      expect(containsPrivateKey(`key ${key}`)).toBe(true);
    }
  });

  it('decodes to be sure: public keys and text that merely looks alike pass', () => {
    expect(containsPrivateKey(tpub)).toBe(false);
    expect(containsPrivateKey('xprv tprv zprv are the private key prefixes')).toBe(false);
    // A key with one character changed fails its checksum.
    const broken = `${tprv.slice(0, 50)}${tprv[50] === 'a' ? 'b' : 'a'}${tprv.slice(51)}`;
    expect(containsPrivateKey(broken)).toBe(false);
    expect(containsPrivateKey('K'.repeat(52))).toBe(false);
    expect(textProblem(`tprv${'A'.repeat(107)}`)).toBeUndefined();
  });

  it('hides keys and key-looking words, whole or cut short, in quoted input', () => {
    expect(hidePrivateKeys(`a ${tprv} b`)).toBe('a (private key hidden) b');
    expect(hidePrivateKeys(`Derivation: ${tprv.slice(0, 40)}`)).not.toContain(tprv.slice(4, 40));
    expect(hidePrivateKeys(wif(0x80, true))).toBe('(private key hidden)');
    expect(quoteInput(tprv, 40)).not.toContain(tprv.slice(4, 20));
    expect(quoteInput('m/48h/x', 40)).toBe('"m/48h/x"');
    expect(hidePrivateKeys(tpub)).toBe(tpub);
  });
});
