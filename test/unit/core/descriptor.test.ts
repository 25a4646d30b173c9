import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { toHex } from '../../../src/core/bytes.js';
import { CoreError } from '../../../src/core/errors.js';
import { NETWORKS } from '../../../src/core/network.js';
import {
  DescriptorDeriver,
  DescriptorError,
  addChecksum,
  describeDescriptor,
  descriptorsFromPolicy,
  expandMultipath,
  formatDescriptor,
  normalizeDescriptor,
  parseDescriptor,
  resolveWalletDescriptors,
  splitMultipath,
  stripChecksum,
} from '../../../src/core/descriptor/index.js';
import { encodeExtendedPublicKey, parseExtendedPublicKey } from '../../../src/core/keys/index.js';
import { loadFixture } from '../../support/fixtures.js';

const vectors = JSON.parse(readFileSync(new URL('../../vectors/descriptors-bip380-389.json', import.meta.url), 'utf8'));
const mainnet = NETWORKS.mainnet;
const regtest = NETWORKS.regtest;
const wallets = loadFixture('wallets');

function errorOf(fn: () => unknown): CoreError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CoreError) return e;
    throw new Error(`expected a CoreError, got ${String(e)}`);
  }
  throw new Error('expected an error, got none');
}

describe('BIP380 checksums', () => {
  for (const { descriptor, reason, valid } of vectors.checksums) {
    it(`${reason}: ${descriptor}`, () => {
      if (valid) expect(stripChecksum(descriptor).body).toBe('raw(deadbeef)');
      else expect(() => stripChecksum(descriptor)).toThrow(DescriptorError);
    });
  }
  it('creates the checksum of the BIP example and of the fixture descriptors', () => {
    expect(addChecksum('raw(deadbeef)')).toBe('raw(deadbeef)#89f8spxm');
    for (const wallet of Object.values<any>(wallets)) {
      for (const text of [wallet.recv_descriptor, wallet.change_descriptor] as string[]) {
        expect(addChecksum(text.split('#')[0]!)).toBe(text);
      }
    }
  });
  it('a wrong checksum is refused, a missing one is added', () => {
    const text: string = wallets.w_wpkh.recv_descriptor;
    const [body, sum] = text.split('#') as [string, string];
    const wrong = `${body}#${sum.slice(0, 7)}${sum[7] === 'q' ? 'p' : 'q'}`;
    expect(errorOf(() => parseDescriptor(wrong, regtest)).code).toBe('invalid_checksum');
    expect(normalizeDescriptor(body, regtest)).toBe(text);
  });
});

describe('BIP380 key expressions (inside pkh())', () => {
  for (const { key, reason, expect: outcome } of vectors.validKeys) {
    it(`${reason} -> ${outcome}`, () => {
      const text = `pkh(${key})`;
      if (outcome === 'ok') {
        const parsed = parseDescriptor(text, mainnet);
        expect(parsed.keys).toHaveLength(1);
        // printing normalises ' to h and keeps everything else
        expect(formatDescriptor(parsed).split('#')[0]).toBe(text.replace(/'/g, 'h'));
      } else {
        expect(errorOf(() => parseDescriptor(text, mainnet)).code).toBe(outcome);
      }
    });
  }
  for (const { key, reason } of vectors.invalidKeys) {
    it(`refuses: ${reason}`, () => {
      expect(errorOf(() => parseDescriptor(`pkh(${key})`, mainnet))).toBeInstanceOf(DescriptorError);
    });
  }
});

describe('BIP381-386 valid descriptors', () => {
  for (const vector of vectors.valid) {
    it(`BIP${vector.bip}: ${vector.descriptor.slice(0, 70)} -> ${vector.expect}`, () => {
      if (vector.expect !== 'scripts') {
        const error = errorOf(() => parseDescriptor(vector.descriptor, mainnet));
        expect(error.code).toBe(vector.expect);
        if (vector.expect === 'unsupported') expect(error.message).toMatch(/Unsupported descriptor: .+ is not supported by this service/);
        return;
      }
      const parsed = parseDescriptor(vector.descriptor, mainnet);
      const outputs = new DescriptorDeriver(parsed).deriveRange(0, vector.scripts.length);
      expect(outputs.map((o) => toHex(o.scriptPubKey))).toEqual(vector.scripts);
    });
  }
  it('unsupported forms name what is unsupported', () => {
    expect(errorOf(() => parseDescriptor('pk(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)', mainnet)).message).toContain('pk()');
    expect(errorOf(() => parseDescriptor('sh(pkh(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd))', mainnet)).message).toContain('sh(pkh())');
    expect(errorOf(() => parseDescriptor('combo(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)', mainnet)).message).toContain('combo()');
    expect(errorOf(() => parseDescriptor('tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd,pk(669b8afcec803a0d323e9a17f3ea8e68e8abe5a278020a929adbec52421adbd0))', mainnet)).message).toContain('script tree');
    expect(errorOf(() => parseDescriptor('foo(bar)', mainnet)).code).toBe('invalid_descriptor');
    const uncompressed = '04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235';
    expect(errorOf(() => parseDescriptor(`sh(multi(1,${Array(8).fill(uncompressed).join(',')}))`, mainnet)).message).toContain('520');
    expect(parseDescriptor(`sh(multi(1,${Array(7).fill(uncompressed).join(',')}))`, mainnet).keys).toHaveLength(7);
  });
});

describe('BIP381-389 invalid descriptors', () => {
  for (const vector of vectors.invalid) {
    it(`BIP${vector.bip}: ${vector.reason}`, () => {
      expect(errorOf(() => parseDescriptor(vector.descriptor, mainnet))).toBeInstanceOf(DescriptorError);
    });
  }
});

describe('BIP389 multipath', () => {
  for (const vector of vectors.multipath) {
    it(`${vector.descriptor.slice(0, 60)} -> ${vector.expect}`, () => {
      if (vector.expect === 'unsupported') {
        expect(errorOf(() => parseDescriptor(vector.descriptor, mainnet)).code).toBe('unsupported');
        return;
      }
      const expanded = expandMultipath(parseDescriptor(vector.descriptor, mainnet)).map(formatDescriptor);
      expect(expanded).toEqual(vector.expands.map((d: string) => normalizeDescriptor(d, mainnet)));
    });
  }
  it('splits a <0;1> wallet descriptor into the fixture receive and change descriptors', () => {
    for (const wallet of Object.values<any>(wallets)) {
      const multipath = (wallet.recv_descriptor as string).split('#')[0]!.replace(/\/0\/\*/g, '/<0;1>/*');
      const pair = splitMultipath(parseDescriptor(multipath, regtest));
      expect(pair).toEqual({ receive: wallet.recv_descriptor, change: wallet.change_descriptor });
    }
  });
  it('refuses to derive from an unsplit multipath descriptor, and to split three branches as receive/change', () => {
    const three = 'pkh(xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB/<0;1;2>/*)';
    expect(errorOf(() => new DescriptorDeriver(parseDescriptor(three, mainnet))).code).toBe('multipath');
    expect(errorOf(() => splitMultipath(parseDescriptor(three, mainnet))).code).toBe('multipath');
  });
});

describe('regtest fixtures', () => {
  const timeline = loadFixture('timeline');
  const descriptors = new Map<string, { recv: DescriptorDeriver; change: DescriptorDeriver }>();
  for (const [name, wallet] of Object.entries<any>(wallets)) {
    descriptors.set(name, {
      recv: new DescriptorDeriver(parseDescriptor(wallet.recv_descriptor, regtest)),
      change: new DescriptorDeriver(parseDescriptor(wallet.change_descriptor, regtest)),
    });
  }

  it('prints every wallet descriptor back unchanged', () => {
    for (const wallet of Object.values<any>(wallets)) {
      expect(normalizeDescriptor(wallet.recv_descriptor, regtest)).toBe(wallet.recv_descriptor);
      expect(normalizeDescriptor(wallet.change_descriptor, regtest)).toBe(wallet.change_descriptor);
    }
  });

  it('every unspent address equals the one derived at the index its desc names, for all seven wallets', () => {
    const seen = new Set<string>();
    let checked = 0;
    for (const snapshot of timeline.snapshots) {
      for (const [name, expected] of Object.entries<any>(snapshot.expected)) {
        for (const utxo of expected.unspent) {
          // desc like wpkh([654cf308/84h/1h/0h/0/3]02...)#...: the last two origin steps are branch and index
          const origin = /\[([0-9a-f]{8})((?:\/\d+h?)+)\]/.exec(utxo.desc)!;
          const steps = origin[2]!.split('/').slice(1);
          const branch = steps.at(-2)!;
          const index = Number(steps.at(-1));
          const deriver = descriptors.get(name)![branch === '0' ? 'recv' : 'change'];
          const output = deriver.derive(index);
          expect(output.address, `${name} ${branch}/${index}`).toBe(utxo.address);
          // the desc's key (and its origin) is one of our derived keys at that index
          const keyHex = /\]([0-9a-f]{64,66})/.exec(utxo.desc)![1]!;
          const ours = output.keys.find((k) => toHex(k.publicKey) === keyHex);
          expect(ours, `${name} key ${keyHex}`).toBeDefined();
          expect(`[${ours!.fingerprint}${ours!.pathText.slice(1)}]`).toBe(`[${origin[1]}${origin[2]}]`);
          seen.add(name);
          checked++;
        }
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(wallets).sort());
    expect(checked).toBeGreaterThan(50);
  });

  it('every received-to address of the transaction lists belongs to that wallet (receive or change, index < 100)', () => {
    const known = new Map<string, Set<string>>();
    for (const [name, d] of descriptors) known.set(name, new Set([...d.recv.addresses(0, 100), ...d.change.addresses(0, 100)]));
    let checked = 0;
    for (const snapshot of timeline.snapshots) {
      for (const [name, expected] of Object.entries<any>(snapshot.expected)) {
        for (const tx of expected.transactions) {
          if (tx.category !== 'receive') continue;
          expect(known.get(name)!.has(tx.address), `${name} ${tx.address}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('PSBT derivations recorded by Core match ours (bip32_derivs, taproot_bip32_derivs, scripts)', () => {
    const psbts = loadFixture('psbts');
    let checked = 0;
    for (const [name, record] of Object.entries<any>(psbts)) {
      if (name.startsWith('_')) continue;
      const decoded = record.stages[0].decoded;
      for (const entry of [...decoded.inputs, ...decoded.outputs]) {
        const derivs = entry.bip32_derivs ?? entry.taproot_bip32_derivs;
        if (!derivs) continue;
        const steps = (derivs[0].path as string).split('/');
        const branch = steps.at(-2)!;
        const index = Number(steps.at(-1));
        const output = descriptors.get(name)![branch === '0' ? 'recv' : 'change'].derive(index);
        const ours = output.keys.map((k) => ({ pubkey: toHex(k.publicKey), master_fingerprint: k.fingerprint, path: k.pathText }));
        const theirs = derivs.map((d: any) => ({ pubkey: d.pubkey, master_fingerprint: d.master_fingerprint, path: d.path }));
        expect(ours.sort((a, b) => a.pubkey.localeCompare(b.pubkey))).toEqual(theirs.sort((a: any, b: any) => a.pubkey.localeCompare(b.pubkey)));
        if (entry.witness_script) expect(toHex(output.witnessScript!)).toBe(entry.witness_script.hex);
        if (entry.redeem_script) expect(toHex(output.redeemScript!)).toBe(entry.redeem_script.hex);
        if (entry.taproot_internal_key) expect(toHex(output.taproot!.internalKey)).toBe(entry.taproot_internal_key);
        const spk = entry.witness_utxo?.scriptPubKey?.hex;
        if (spk) expect(toHex(output.scriptPubKey)).toBe(spk);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('the policy builder reproduces every wallet descriptor pair from its keys', () => {
    for (const wallet of Object.values<any>(wallets)) {
      const keys = wallet.keys.map((k: any) => ({ key: `[${k.fingerprint}${k.derivation.slice(1)}]${k.tpub}` }));
      const pair = descriptorsFromPolicy({ type: wallet.type, threshold: wallet.sigs_required, keys }, regtest);
      expect(pair).toEqual({ receive: wallet.recv_descriptor, change: wallet.change_descriptor });
    }
  });

  it('the policy builder accepts SLIP-132 keys and normalises them to tpub', () => {
    const wallet = wallets.w_wsh2of3;
    const keys = wallet.keys.map((k: any, i: number) => {
      const kind = (['Vpub', 'vpub', 'upub'] as const)[i]!;
      const slip = encodeExtendedPublicKey(parseExtendedPublicKey(k.tpub, regtest), regtest, kind);
      return { key: `[${k.fingerprint}${k.derivation.slice(1)}]${slip}` };
    });
    expect(keys[0].key).toContain(']Vpub');
    expect(descriptorsFromPolicy({ type: 'wsh-sortedmulti', threshold: 2, keys }, regtest)).toEqual({
      receive: wallet.recv_descriptor,
      change: wallet.change_descriptor,
    });
  });

  it('describes wallets: address type, signatures and keys', () => {
    const expectations: Record<string, string> = {
      w_wpkh: 'bech32', w_shwpkh: 'p2sh-segwit', w_pkh: 'legacy', w_tr: 'bech32m',
      w_wsh2of3: 'bech32', w_shwsh2of3: 'p2sh-segwit', w_wsh2of2: 'bech32',
    };
    for (const [name, wallet] of Object.entries<any>(wallets)) {
      const info = describeDescriptor(parseDescriptor(wallet.recv_descriptor, regtest));
      expect(info.addressType).toBe(expectations[name]);
      expect(info.type).toBe(wallet.type);
      expect(info.sigsRequired).toBe(wallet.sigs_required);
      expect(info.sigsTotal).toBe(wallet.keys.length);
      expect(info.keys).toEqual(
        wallet.keys.map((k: any) => ({ fingerprint: k.fingerprint, derivation: k.derivation.replace(/'/g, 'h'), xpub: k.tpub })),
      );
    }
  });

  it('refuses bad policies with typed errors', () => {
    const key = `[654cf308/84h/1h/0h]${wallets.w_wpkh.keys[0].tpub}`;
    const cases: [unknown, string][] = [
      [{ type: 'wpkh', keys: [{ key }, { key }] }, 'invalid_policy'],
      [{ type: 'wsh-multi', threshold: 3, keys: [{ key }] }, 'invalid_policy'],
      [{ type: 'wsh-multi', threshold: 1, keys: [{ key }, { key }] }, 'invalid_policy'],
      [{ type: 'bare-multi', threshold: 1, keys: [{ key }] }, 'invalid_policy'],
      [{ type: 'wpkh', keys: [{ key: wallets.w_wpkh.keys[0].tpub }] }, 'invalid_policy'],
      [{ type: 'wpkh', keys: [{ key: `${key}/0/*` }] }, 'invalid_policy'],
      [{ type: 'wpkh', keys: [{ key: key.replace('tpub', 'xpub') }] }, 'invalid_key'],
      [{ type: 'wpkh', keys: [{ key: `[654cf308/84h/1h/0h]${wallets.w_wpkh.keys[0].tprv}` }] }, 'private_key'],
      [{ type: 'wpkh', keys: [{ key: 'A' }] }, 'invalid_key'],
      [{ type: 'wsh-multi', threshold: 1, keys: [{ key }, { key: `[654cf308/84h/1h/0h]02${'1'.repeat(63)}` }] }, 'invalid_key'],
    ];
    for (const [policy, code] of cases) {
      expect(errorOf(() => descriptorsFromPolicy(policy as never, regtest)).code, JSON.stringify(policy).slice(0, 80)).toBe(code);
    }
    const mainnetKey = encodeExtendedPublicKey(parseExtendedPublicKey(wallets.w_wpkh.keys[0].tpub, regtest), mainnet);
    expect(errorOf(() => descriptorsFromPolicy({ type: 'wpkh', keys: [{ key: `[654cf308/84h/1h/0h]${mainnetKey}` }] }, regtest)).code).toBe('wrong_network');
  });

  it('batched ranges equal index-by-index derivation', () => {
    const deriver = descriptors.get('w_shwsh2of3')!.recv;
    const batch = deriver.deriveRange(5, 20).map((o) => o.address);
    const single = Array.from({ length: 20 }, (_, i) => new DescriptorDeriver(deriver.descriptor).derive(5 + i).address);
    expect(batch).toEqual(single);
  });

  it('derives the last non-hardened index and refuses indices beyond it', () => {
    const deriver = descriptors.get('w_wpkh')!.recv;
    const last = 2 ** 31 - 1;
    expect(deriver.derive(last).address).toBe(deriver.deriveRange(last, 1)[0]!.address);
    expect(deriver.derive(last).keys[0]!.pathText).toBe(`m/84h/1h/0h/0/${last}`);
    for (const bad of [2 ** 31, -1, 0.5]) expect(errorOf(() => deriver.derive(bad)).code).toBe('invalid_index');
    expect(errorOf(() => deriver.deriveRange(last, 2)).code).toBe('invalid_index');
  });
});

describe('resolveWalletDescriptors', () => {
  it('gives the fixture pair and summary from a multipath descriptor, a pair, or a policy', () => {
    for (const wallet of Object.values<any>(wallets)) {
      const expected = { receive: wallet.recv_descriptor, change: wallet.change_descriptor };
      const multipath = (wallet.recv_descriptor as string).split('#')[0]!.replace(/\/0\/\*/g, '/<0;1>/*');
      const keys = wallet.keys.map((k: any) => ({ key: `[${k.fingerprint}${k.derivation.slice(1)}]${k.tpub}` }));
      const fromPair = resolveWalletDescriptors({ recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor }, regtest);
      const fromMultipath = resolveWalletDescriptors({ descriptor: multipath }, regtest);
      const fromPolicy = resolveWalletDescriptors({ policy: { type: wallet.type, threshold: wallet.sigs_required, keys } }, regtest);
      for (const result of [fromPair, fromMultipath, fromPolicy]) {
        expect({ receive: result.receive, change: result.change }).toEqual(expected);
        expect(result.info.sigsRequired).toBe(wallet.sigs_required);
      }
    }
  });
  it('refuses mismatched pairs, non-ranged descriptors and ambiguous input', () => {
    const a = wallets.w_wpkh;
    const b = wallets.w_shwpkh;
    const cases: [unknown, string][] = [
      [{ recv_descriptor: a.recv_descriptor, change_descriptor: b.change_descriptor }, 'invalid_policy'],
      [{ recv_descriptor: a.recv_descriptor, change_descriptor: a.recv_descriptor }, 'invalid_policy'],
      [{ recv_descriptor: a.recv_descriptor.split('#')[0].replace('/0/*', '/0/5'), change_descriptor: a.change_descriptor }, 'not_ranged'],
      [{ descriptor: a.recv_descriptor }, 'multipath'],
      [{ descriptor: a.recv_descriptor, policy: {} }, 'invalid_policy'],
      [{}, 'invalid_policy'],
      [null, 'invalid_policy'],
      [{ recv_descriptor: a.recv_descriptor }, 'invalid_policy'],
    ];
    for (const [input, code] of cases) {
      expect(errorOf(() => resolveWalletDescriptors(input as never, regtest)).code, JSON.stringify(input)?.slice(0, 60)).toBe(code);
    }
  });
});
