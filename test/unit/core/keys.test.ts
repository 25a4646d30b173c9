import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { HDKey } from '@scure/bip32';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { CoreError, KeyError } from '../../../src/core/errors.js';
import { NETWORKS } from '../../../src/core/network.js';
import {
  HARDENED,
  branchNode,
  deriveChild,
  deriveChildPublicKeys,
  derivePath,
  encodeExtendedPublicKey,
  formatPath,
  parseExtendedPublicKey,
  parsePath,
} from '../../../src/core/keys/index.js';
import { addTweaksToPoint } from '../../../src/core/keys/fixed-base.js';
import { loadFixture } from '../../support/fixtures.js';

const bip32 = JSON.parse(readFileSync(new URL('../../vectors/bip32.json', import.meta.url), 'utf8'));
const mainnet = NETWORKS.mainnet;
const regtest = NETWORKS.regtest;

describe('BIP32 official vectors', () => {
  for (const vector of bip32.valid) {
    describe(vector.name, () => {
      it('every ext pub parses and re-serialises unchanged', () => {
        for (const chain of vector.chains) {
          const key = parseExtendedPublicKey(chain.xpub, mainnet);
          expect(encodeExtendedPublicKey(key, mainnet)).toBe(chain.xpub);
        }
      });

      it('public derivation of each non-hardened step gives the next ext pub', () => {
        let checked = 0;
        for (let i = 1; i < vector.chains.length; i++) {
          const last = parsePath(vector.chains[i].path).at(-1)!;
          if (last >= HARDENED) continue;
          const parent = parseExtendedPublicKey(vector.chains[i - 1].xpub, mainnet);
          expect(encodeExtendedPublicKey(deriveChild(parent, last), mainnet)).toBe(vector.chains[i].xpub);
          checked++;
        }
        expect(checked).toBe(vector.chains.filter((c: { path: string }, i: number) => i > 0 && !/h$/.test(c.path)).length);
      });

      it('the private vectors (via @scure/bip32) agree, and our public derivation matches theirs for 50 children', () => {
        const master = HDKey.fromMasterSeed(fromHex(vector.seed));
        for (const chain of vector.chains) {
          const node = chain.path === 'm' ? master : master.derive(chain.path.replace(/h/g, "'"));
          expect(node.privateExtendedKey).toBe(chain.xprv);
          expect(node.publicExtendedKey).toBe(chain.xpub);
        }
        const last = vector.chains.at(-1);
        const ours = branchNode(parseExtendedPublicKey(last.xpub, mainnet));
        const node = HDKey.fromExtendedKey(last.xprv);
        const derived = deriveChildPublicKeys(ours, 0, 50).map(toHex);
        expect(derived).toEqual(Array.from({ length: 50 }, (_, i) => toHex(node.deriveChild(i).publicKey!)));
      });
    });
  }

  it('test vector 5: every invalid key is refused with a typed error', () => {
    for (const { key, reason } of bip32.invalid) {
      let error: unknown;
      try {
        parseExtendedPublicKey(key, mainnet);
      } catch (e) {
        error = e;
      }
      expect(error, reason).toBeInstanceOf(KeyError);
      expect(['invalid_key', 'private_key']).toContain((error as KeyError).code);
    }
  });
});

describe('SLIP-132 and networks', () => {
  const wallets = loadFixture('wallets');
  const tpub = wallets.w_wpkh.keys[0].tpub as string;
  const parsed = parseExtendedPublicKey(tpub, regtest);

  it('accepts every SLIP-132 form of a testnet key on the test networks and normalises to tpub', () => {
    for (const kind of ['tpub', 'upub', 'vpub', 'Upub', 'Vpub'] as const) {
      const text = encodeExtendedPublicKey(parsed, regtest, kind);
      expect(text.startsWith(kind)).toBe(true);
      for (const network of [NETWORKS.testnet, NETWORKS.testnet4, NETWORKS.signet, regtest]) {
        const again = parseExtendedPublicKey(text, network);
        expect(again.kind).toBe(kind);
        expect(encodeExtendedPublicKey(again, network)).toBe(tpub);
      }
    }
  });

  it('accepts the mainnet forms on mainnet only', () => {
    const xpub = encodeExtendedPublicKey(parsed, mainnet);
    for (const kind of ['xpub', 'ypub', 'zpub', 'Ypub', 'Zpub'] as const) {
      const text = encodeExtendedPublicKey(parsed, mainnet, kind);
      expect(encodeExtendedPublicKey(parseExtendedPublicKey(text, mainnet), mainnet)).toBe(xpub);
      expect(() => parseExtendedPublicKey(text, regtest)).toThrow(expect.objectContaining({ code: 'wrong_network' }));
    }
    expect(() => parseExtendedPublicKey(tpub, mainnet)).toThrow(expect.objectContaining({ code: 'wrong_network' }));
  });

  it('refuses extended private keys', () => {
    expect(() => parseExtendedPublicKey(wallets.w_wpkh.keys[0].tprv, regtest)).toThrow(
      expect.objectContaining({ code: 'private_key' }),
    );
  });

  it('the fixture account tpubs are the public halves of their tprvs and derive like @scure/bip32', () => {
    for (const wallet of Object.values<any>(wallets)) {
      for (const key of wallet.keys) {
        const priv = HDKey.fromExtendedKey(key.tprv, { private: 0x04358394, public: 0x043587cf });
        const pub = parseExtendedPublicKey(key.tpub, regtest);
        expect(toHex(pub.publicKey)).toBe(toHex(priv.publicKey!));
        const receive = derivePath(pub, [0]);
        const ours = deriveChildPublicKeys(branchNode(receive), 0, 5).map(toHex);
        expect(ours).toEqual([0, 1, 2, 3, 4].map((i) => toHex(priv.derive(`m/0/${i}`).publicKey!)));
      }
    }
  });
});

describe('paths', () => {
  it('parses both hardened markers and prints h', () => {
    expect(formatPath(parsePath("m/84'/1'/0'"))).toBe('m/84h/1h/0h');
    expect(formatPath(parsePath('48h/1h/0h/2h/0/7'))).toBe('m/48h/1h/0h/2h/0/7');
    expect(parsePath('m')).toEqual([]);
  });
  it('refuses malformed steps', () => {
    for (const bad of ['m/', 'm/01', 'm/2147483648', 'm/1H', 'm/-1', 'm/1hh', 'x/1', '', 'm//1']) {
      expect(() => parsePath(bad), bad).toThrow(KeyError);
    }
  });
});

describe('batched tweak addition', () => {
  const { Point } = secp256k1;
  it('equals noble point arithmetic for random points and tweaks', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: Point.Fn.ORDER - 1n }),
        fc.array(fc.bigInt({ min: 0n, max: Point.Fn.ORDER - 1n }), { minLength: 1, maxLength: 8 }),
        (secret, tweaks) => {
          const base = Point.BASE.multiply(secret);
          const { x, y } = base.toAffine();
          const ours = addTweaksToPoint(x, y, tweaks);
          tweaks.forEach((t, i) => {
            const expected = t === 0n ? base : base.add(Point.BASE.multiply(t));
            if (expected.is0()) expect(ours[i]).toBeUndefined();
            else expect(ours[i]).toEqual(expected.toAffine());
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('gives the same points whether a batch is small (Jacobian additions) or large (shared inversions)', () => {
    const base = Point.BASE.multiply(987654321n);
    const { x, y } = base.toAffine();
    const tweaks = Array.from({ length: 40 }, (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15f39cc0605cedc834n) % Point.Fn.ORDER);
    const large = addTweaksToPoint(x, y, tweaks);
    const oneByOne = tweaks.map((t) => addTweaksToPoint(x, y, [t])[0]);
    expect(oneByOne).toEqual(large);
    expect(large[7]).toEqual(base.add(Point.BASE.multiply(tweaks[7]!)).toAffine());
  });

  it('handles the degenerate additions (P + (-P) and P + P) exactly, in small and large batches', () => {
    const k = 12345n;
    const base = Point.BASE.multiply(k);
    const { x, y } = base.toAffine();
    for (const padding of [0, 30]) {
      const [infinity, doubled] = addTweaksToPoint(x, y, [Point.Fn.ORDER - k, k, ...Array.from({ length: padding }, (_, i) => BigInt(i + 1))]);
      expect(infinity).toBeUndefined();
      expect(doubled).toEqual(base.double().toAffine());
    }
  });
});

describe('malformed keys never crash', () => {
  it('random text gives a KeyError', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 130 }), (text) => {
        try {
          parseExtendedPublicKey(text, mainnet);
        } catch (e) {
          expect(e).toBeInstanceOf(CoreError);
        }
      }),
      { numRuns: 300 },
    );
  });
  it('single-character corruptions of a valid key are refused', () => {
    const xpub = bip32.valid[0].chains[1].xpub as string;
    fc.assert(
      fc.property(fc.nat({ max: xpub.length - 1 }), fc.constantFrom(...'123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'), (i, c) => {
        const changed = xpub.slice(0, i) + c + xpub.slice(i + 1);
        if (changed === xpub) return;
        expect(() => parseExtendedPublicKey(changed, mainnet)).toThrow(KeyError);
      }),
      { numRuns: 200 },
    );
  });
  it('refuses hardened and out-of-range indices for public derivation', () => {
    const key = parseExtendedPublicKey(bip32.valid[0].chains[0].xpub, mainnet);
    for (const bad of [HARDENED, -1, 1.5, Number.NaN]) expect(() => deriveChild(key, bad)).toThrow(KeyError);
    expect(() => deriveChildPublicKeys(branchNode(key), HARDENED - 1, 2)).toThrow(KeyError);
  });
});
