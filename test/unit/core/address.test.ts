import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { bech32, bech32m } from '@scure/base';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { AddressError } from '../../../src/core/errors.js';
import { NETWORKS, type Network } from '../../../src/core/network.js';
import { decodeAddress, encodeAddress, normalizeAddress, p2pkhScript, p2shScript } from '../../../src/core/address.js';
import { loadFixture } from '../../support/fixtures.js';

const vectors = JSON.parse(readFileSync(new URL('../../vectors/bip173-bip350.json', import.meta.url), 'utf8'));
const ALL: Network[] = Object.values(NETWORKS);
const networkOf = (address: string): Network => (address.toLowerCase().startsWith('bc1') ? NETWORKS.mainnet : NETWORKS.testnet);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AddressError);
    return (e as AddressError).code;
  }
  throw new Error('expected an AddressError');
}

describe('BIP173/BIP350 checksum layer (the bech32/bech32m codecs addresses are built on)', () => {
  it('accepts the valid strings with the right variant only', () => {
    for (const s of vectors.validBech32) {
      expect(() => bech32.decode(s, 90)).not.toThrow();
      expect(() => bech32m.decode(s, 90), s).toThrow();
    }
    for (const s of vectors.validBech32m) {
      expect(() => bech32m.decode(s, 90)).not.toThrow();
      expect(() => bech32.decode(s, 90), s).toThrow();
    }
  });
  it('refuses the invalid strings', () => {
    for (const { string, reason } of vectors.invalidBech32) expect(() => bech32.decode(string, 90), reason).toThrow();
    for (const { string, reason } of vectors.invalidBech32m) expect(() => bech32m.decode(string, 90), reason).toThrow();
  });
  it('no valid checksum string is an address', () => {
    for (const s of [...vectors.validBech32, ...vectors.validBech32m]) {
      for (const n of ALL) expect(codeOf(() => decodeAddress(s, n))).toBe('invalid_address');
    }
  });
});

describe('BIP173/BIP350 segwit addresses', () => {
  for (const { address, scriptPubKey } of vectors.validAddresses) {
    it(`valid: ${address}`, () => {
      const network = networkOf(address);
      expect(toHex(decodeAddress(address, network))).toBe(scriptPubKey);
      expect(encodeAddress(fromHex(scriptPubKey), network)).toBe(address.toLowerCase());
      expect(normalizeAddress(address, network)).toBe(address.toLowerCase());
      const other = network === NETWORKS.mainnet ? NETWORKS.testnet : NETWORKS.mainnet;
      expect(codeOf(() => decodeAddress(address, other))).toBe('wrong_network');
      expect(codeOf(() => decodeAddress(address, NETWORKS.regtest))).toBe('wrong_network');
    });
  }
  for (const { address, reason } of vectors.invalidAddresses) {
    it(`invalid (${reason}): ${address}`, () => {
      for (const n of ALL) expect(codeOf(() => decodeAddress(address, n))).toBe('invalid_address');
    });
  }
});

describe('base58 addresses', () => {
  const hash = fromHex('751e76e8199196d454941c45d1b3a323f1433bd6');
  it('round-trips P2PKH and P2SH on every network and refuses the other networks', () => {
    for (const network of ALL) {
      for (const script of [p2pkhScript(hash), p2shScript(hash)]) {
        const address = encodeAddress(script, network)!;
        expect(toHex(decodeAddress(address, network))).toBe(toHex(script));
        const other = network === NETWORKS.mainnet ? NETWORKS.testnet : NETWORKS.mainnet;
        expect(codeOf(() => decodeAddress(address, other))).toBe('wrong_network');
      }
    }
    expect(encodeAddress(p2pkhScript(hash), NETWORKS.mainnet)).toBe('1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH');
  });
  it('refuses a bad checksum', () => {
    expect(codeOf(() => decodeAddress('1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMJ', NETWORKS.mainnet))).toBe('invalid_address');
  });
});

describe('fixture addresses', () => {
  it('every regtest address in the timeline decodes and re-encodes unchanged', () => {
    const timeline = loadFixture('timeline');
    const addresses = new Set<string>(Object.values(timeline.addresses));
    for (const s of timeline.snapshots) for (const e of Object.values<any>(s.expected)) {
      for (const u of e.unspent) addresses.add(u.address);
      for (const t of e.transactions) if (t.address) addresses.add(t.address);
    }
    expect(addresses.size).toBeGreaterThan(30);
    for (const a of addresses) {
      expect(encodeAddress(decodeAddress(a, NETWORKS.regtest), NETWORKS.regtest)).toBe(a);
      expect(codeOf(() => decodeAddress(a, NETWORKS.mainnet))).toMatch(/wrong_network|invalid_address/);
    }
  });
});

describe('malformed addresses never crash', () => {
  it('random text gives AddressError', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.constantFrom(...ALL), (text, network) => {
        try {
          const script = decodeAddress(text, network);
          expect(encodeAddress(script, network)).toBe(normalizeAddress(text, network));
        } catch (e) {
          expect(e).toBeInstanceOf(AddressError);
        }
      }),
      { numRuns: 500 },
    );
  });
  it('one-character changes of valid addresses are refused or decode consistently', () => {
    const valid = vectors.validAddresses.map((v: { address: string }) => v.address.toLowerCase());
    fc.assert(
      fc.property(fc.constantFrom<string>(...valid), fc.nat(), fc.constantFrom(...'qpzry9x8gf2tvdw0s3jn54khce6mua7lQPZRY1'), (address, pos, c) => {
        const i = pos % address.length;
        const changed = address.slice(0, i) + c + address.slice(i + 1);
        if (changed === address) return;
        expect(() => decodeAddress(changed, networkOf(address))).toThrow(AddressError);
      }),
      { numRuns: 500 },
    );
  });
  it('refuses non-string input', () => {
    for (const bad of [undefined, null, 42, {}]) expect(codeOf(() => decodeAddress(bad as never, NETWORKS.mainnet))).toBe('invalid_address');
  });
});
