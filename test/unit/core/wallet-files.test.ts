/**
 * Wallet setup files read from the formats' own examples and from files the tools wrote (test/vectors/<format>/,
 * origins in each PROVENANCE.md), and every format written and read back as the same wallet.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../../src/core/descriptor/index.js';
import { CoreError } from '../../../src/core/errors.js';
import { NETWORKS, type Network } from '../../../src/core/network.js';
import {
  WALLET_FILE_FORMATS,
  detectWalletFileFormat,
  readWalletFile,
  writeWalletFile,
  type WalletFileFormat,
  type WalletSetup,
} from '../../../src/core/wallet-files/index.js';

const mainnet = NETWORKS.mainnet;
const testnet = NETWORKS.testnet;
const regtest = NETWORKS.regtest;
const vector = (path: string): string => readFileSync(new URL(`../../vectors/${path}`, import.meta.url), 'utf8');
const addresses = (setup: WalletSetup, network: Network, count = 3): string[][] =>
  [setup.descriptors.receive, setup.descriptors.change].map((d) => new DescriptorDeriver(parseDescriptor(d, network)).deriveRange(0, count).map((o) => o.address));

function failure(run: () => unknown): CoreError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CoreError);
    return error as CoreError;
  }
  throw new Error('expected a failure');
}

describe('format detection', () => {
  it.each([
    ['descriptor/sparrow-descriptor-multipath.txt', 'descriptor'],
    ['descriptor/sparrow-descriptor-receive-change1.txt', 'descriptor'],
    ['bsms/bip129-example-2.bsms', 'bsms'],
    ['coldcard/firmware-export-p2wsh-myself.txt', 'coldcard'],
    ['coldcard/sparrow-cc-multisig-export-multideriv.txt', 'coldcard'],
    ['specter/sparrow-specter-wallet.json', 'specter'],
    ['caravan/caravan-bitcoin-2-of-2-P2WSH_TESTNET.json', 'caravan'],
  ] as const)('%s is %s', (path, format) => {
    expect(detectWalletFileFormat(vector(path))).toBe(format);
  });

  it('refuses text of no known format', () => {
    expect(failure(() => detectWalletFileFormat('hello world')).code).toBe('unknown_wallet_file');
    expect(failure(() => detectWalletFileFormat('{"wallet": 1}')).code).toBe('unknown_wallet_file');
  });
});

describe('output descriptor files (Sparrow)', () => {
  it('reads a multipath descriptor, a receive/change pair with or without a blank line, and a labelled one alike', () => {
    const multipath = readWalletFile(vector('descriptor/sparrow-descriptor-multipath.txt'), mainnet);
    for (const path of ['sparrow-descriptor-receive-change1.txt', 'sparrow-descriptor-receive-change2.txt', 'sparrow-descriptor-labelled.txt', 'sparrow-descriptor-receive.txt']) {
      const other = readWalletFile(vector(`descriptor/${path}`), mainnet);
      expect(other.descriptors.receive).toBe(multipath.descriptors.receive);
      expect(other.descriptors.change).toBe(multipath.descriptors.change);
    }
    expect(multipath.descriptors.receive).toMatch(/^wpkh\(\[a262308d\/84h\/0h\/0h\]xpub6DM7.*\/0\/\*\)#/);
    expect(multipath.descriptors.info.addressType).toBe('bech32');
  });

  it('refuses a mainnet descriptor on a test network, naming it', () => {
    expect(failure(() => readWalletFile(vector('descriptor/sparrow-descriptor-multipath.txt'), regtest)).code).toBe('wrong_network');
  });
});

describe('BSMS 1.0 descriptor records (BIP129, Sparrow)', () => {
  it.each(['bip129-example-2.bsms', 'bip129-example-3.bsms', 'bip129-example-4.bsms', 'sparrow-multisig-1.bsms', 'sparrow-multisig-2.bsms', 'sparrow-multisig-3.bsms'])(
    '%s: its first address is the one the descriptor derives',
    (path) => {
      const text = vector(`bsms/${path}`);
      const setup = readWalletFile(text, mainnet);
      expect(setup.format).toBe('bsms');
      expect(addresses(setup, mainnet, 1)[0]![0]).toBe(text.trim().split('\n')[3]);
    },
  );

  it('refuses a first address that does not match', () => {
    const error = failure(() => readWalletFile(vector('bsms/sparrow-multisig-address-mismatch.bsms'), mainnet));
    expect(error.code).toBe('address_mismatch');
    expect(error.message).toContain('bc1qng45c3rez2265epnmvhajjj6hlpdv83zn8q8xy6h3mh2pnn8fglq0qgdzk');
  });

  it('refuses threshold zero, a non-ranged record, and a record without path restrictions for a template', () => {
    expect(failure(() => readWalletFile(vector('bsms/sparrow-multisig-threshold-zero.bsms'), mainnet)).code).toBe('invalid_threshold');
    expect(failure(() => readWalletFile(vector('bsms/bip129-example-1.bsms'), mainnet)).code).toBe('invalid_wallet_file');
    expect(failure(() => readWalletFile(vector('bsms/sparrow-multisig-10.bsms'), mainnet)).message).toMatch(/multipath|receive descriptor/);
    expect(failure(() => readWalletFile(vector('bsms/sparrow-multisig-17.bsms'), mainnet)).code).toBe('invalid_wallet_file');
  });
});

describe('Coldcard multisig setup files (firmware, Sparrow, Caravan)', () => {
  it('reads the firmware export: name, 2 of 4, P2WSH, common derivation', () => {
    const setup = readWalletFile(vector('coldcard/firmware-export-p2wsh-myself.txt'), testnet);
    expect(setup.name).toBe('CC-2-of-4');
    expect(setup.descriptors.info).toMatchObject({ type: 'wsh-sortedmulti', sigsRequired: 2, sigsTotal: 4 });
    expect(setup.descriptors.info.keys.map((k) => k.fingerprint)).toEqual(['0f056943', '6ba6cfd0', '747b698e', '7bb026be']);
    expect(setup.descriptors.info.keys.every((k) => k.derivation === 'm/48h/1h/0h/2h')).toBe(true);
  });

  it('reads P2SH-P2WSH (both spellings) and P2SH (no Format line)', () => {
    expect(readWalletFile(vector('coldcard/firmware-export-p2sh-p2wsh-myself.txt'), testnet).descriptors.info.type).toBe('sh-wsh-sortedmulti');
    expect(readWalletFile(vector('coldcard/sparrow-cc-multisig-export-2.txt'), testnet).descriptors.info.type).toBe('sh-wsh-sortedmulti');
    expect(readWalletFile(vector('coldcard/firmware-export-p2sh-myself.txt'), testnet).descriptors.info.type).toBe('sh-sortedmulti');
  });

  it('applies each Derivation line to the keys after it', () => {
    const setup = readWalletFile(vector('coldcard/sparrow-cc-multisig-export-multideriv.txt'), mainnet);
    expect(setup.descriptors.info.keys.map((k) => k.derivation)).toEqual(['m/48h/0h/0h/2h', 'm/48h/0h/0h/2h', 'm/47h/0h/0h/1h']);
    expect(setup.descriptors.info.sigsRequired).toBe(3);
  });

  it('gives the same wallet as the Caravan configuration of the same keys (caravan fixtures)', () => {
    const pairs = [
      ['coldcard/caravan-wc-p2wsh_t.txt', 'caravan/caravan-bitcoin-2-of-2-P2WSH_TESTNET.json'],
      ['coldcard/caravan-wc-p2sh-p2wsh_t.txt', 'caravan/caravan-bitcoin-2-of-2-P2SH-P2WSH_TESTNET.json'],
      ['coldcard/caravan-wc-p2sh_t.txt', 'caravan/caravan-bitcoin-2-of-2-P2SH_TESTNET.json'],
    ];
    for (const [coldcard, caravan] of pairs) {
      const a = readWalletFile(vector(coldcard!), testnet);
      const b = readWalletFile(vector(caravan!), testnet);
      // Same keys in another order: sorted multisig gives the same addresses.
      expect(addresses(a, testnet)).toEqual(addresses(b, testnet));
      expect(a.descriptors.info.type).toBe(b.descriptors.info.type);
    }
  });

  it('refuses a threshold above the key count, a repeated key and keys of another network', () => {
    const base = vector('coldcard/firmware-export-p2wsh-myself.txt');
    expect(failure(() => readWalletFile(base.replace('Policy: 2 of 4', 'Policy: 5 of 4'), testnet)).code).toBe('invalid_threshold');
    expect(failure(() => readWalletFile(base.replace('Policy: 2 of 4', 'Policy: 2 of 3'), testnet)).code).toBe('invalid_threshold');
    const lines = base.trim().split('\n');
    const repeated = [...lines.slice(0, -1), lines[lines.length - 2]!].join('\n');
    expect(failure(() => readWalletFile(repeated, testnet)).code).toBe('repeated_key');
    expect(failure(() => readWalletFile(base, mainnet)).code).toBe('wrong_network');
  });
});

describe('Specter wallet exports', () => {
  it('reads label, blockheight and an account-level descriptor (older exports)', () => {
    const setup = readWalletFile(vector('specter/sparrow-specter-multisig-wallet.json'), mainnet);
    expect(setup).toMatchObject({ format: 'specter', name: 'specter-multisig', birthday: 646246 });
    expect(setup.descriptors.info).toMatchObject({ type: 'wsh-multi', sigsRequired: 3, sigsTotal: 4 });
    expect(setup.descriptors.receive).toContain('/0/*');
    expect(setup.descriptors.change).toContain('/1/*');
    const single = readWalletFile(vector('specter/sparrow-specter-wallet.json'), mainnet);
    expect(single.descriptors.info.type).toBe('sh-wpkh');
  });

  it('takes device labels as key labels when there is one device per key', () => {
    const json = { label: 'Vault', blockheight: 7, descriptor: readWalletFile(vector('coldcard/caravan-wc-p2wsh_t.txt'), testnet).descriptors.receive, devices: [{ type: 'coldcard', label: 'Alice' }, { type: 'trezor', label: 'Bob' }] };
    const setup = readWalletFile(JSON.stringify(json), testnet);
    expect(setup.keyLabels).toEqual(['Alice', 'Bob']);
    expect(setup.birthday).toBe(7);
  });
});

describe('Caravan wallet configurations', () => {
  it('reads name, quorum, key names and paths', () => {
    const setup = readWalletFile(vector('caravan/sparrow-caravan-multisig-export-1.json'), mainnet);
    expect(setup.name).toBe('Test Wallet');
    expect(setup.keyLabels).toEqual(['Mercury', 'Venus', 'Earth']);
    expect(setup.descriptors.info).toMatchObject({ type: 'wsh-sortedmulti', sigsRequired: 2, sigsTotal: 3 });
  });

  it('refuses threshold zero, a quorum that is not the key count, and a file of another network', () => {
    expect(failure(() => readWalletFile(vector('caravan/sparrow-caravan-multisig-export-2.json'), mainnet)).code).toBe('invalid_threshold');
    expect(failure(() => readWalletFile(vector('caravan/sparrow-caravan-multisig-export-3.json'), mainnet)).code).toBe('invalid_threshold');
    const error = failure(() => readWalletFile(vector('caravan/caravan-bitcoin-2-of-2-P2WSH_MAINNET.json'), regtest));
    expect(error.code).toBe('wrong_network');
    expect(error.message).toContain('mainnet');
  });
});

describe('round trips: every format written and read back is the same wallet', () => {
  // Regtest wallets built from the Coldcard firmware's own test keys (tpubs are valid on every test network).
  const multisig = readWalletFile(vector('coldcard/firmware-export-p2wsh-myself.txt'), regtest);
  const wrapped = readWalletFile(vector('coldcard/firmware-export-p2sh-p2wsh-myself.txt'), regtest);
  const legacy = readWalletFile(vector('coldcard/firmware-export-p2sh-myself.txt'), regtest);
  const wallets = [multisig, wrapped, legacy];
  const exportOf = (setup: WalletSetup) => ({
    name: 'Round trip',
    network: regtest,
    receiveDescriptor: setup.descriptors.receive,
    changeDescriptor: setup.descriptors.change,
    keyLabels: setup.descriptors.info.keys.map((_, i) => `Signer ${i + 1}`),
    birthday: 123,
  });

  it.each(WALLET_FILE_FORMATS)('%s', (format: WalletFileFormat) => {
    for (const setup of wallets) {
      const file = writeWalletFile(format, exportOf(setup));
      expect(detectWalletFileFormat(file.text)).toBe(format);
      const back = readWalletFile(file.text, regtest);
      expect(back.descriptors.receive).toBe(setup.descriptors.receive);
      expect(back.descriptors.change).toBe(setup.descriptors.change);
      expect(addresses(back, regtest)).toEqual(addresses(setup, regtest));
      if (format === 'coldcard' || format === 'caravan' || format === 'specter') expect(back.name).toBe('Round trip');
      if (format === 'caravan' || format === 'specter') expect(back.keyLabels).toEqual(['Signer 1', 'Signer 2', 'Signer 3', 'Signer 4']);
      if (format === 'specter') expect(back.birthday).toBe(123);
    }
  });

  it('writes what the tools themselves write: Coldcard lines, BIP129 template, Caravan fields', () => {
    const coldcard = writeWalletFile('coldcard', exportOf(multisig)).text;
    const firmware = vector('coldcard/firmware-export-p2wsh-myself.txt');
    // The key lines and the policy lines are the firmware's own, byte for byte.
    for (const line of firmware.split('\n').filter((l) => /^(Policy|Format|Derivation|[0-9A-F]{8}):/.test(l))) expect(coldcard).toContain(line);
    const bsms = writeWalletFile('bsms', exportOf(multisig)).text.split('\n');
    expect(bsms[0]).toBe('BSMS 1.0');
    expect(bsms[1]).toMatch(/^wsh\(sortedmulti\(2,\[0f056943\/48'\/1'\/0'\/2'\]tpub[^,]+\/\*\*,/);
    expect(bsms[2]).toBe('/0/*,/1/*');
    const caravan = JSON.parse(writeWalletFile('caravan', exportOf(multisig)).text);
    const fixture = JSON.parse(vector('caravan/caravan-bitcoin-2-of-2-P2WSH_TESTNET.json'));
    expect(Object.keys(caravan).sort()).toEqual(Object.keys(fixture).sort());
    expect(caravan.extendedPublicKeys[0]).toMatchObject({ bip32Path: "m/48'/1'/0'/2'", xfp: '0f056943' });
  });

  it('refuses what a format cannot describe: single-key wallets in Coldcard and Caravan files, unsorted multisig', () => {
    const single = readWalletFile(vector('descriptor/sparrow-descriptor-multipath.txt'), mainnet);
    const wallet = { ...exportOf(single), network: mainnet };
    expect(failure(() => writeWalletFile('coldcard', wallet)).code).toBe('export_unsupported');
    expect(failure(() => writeWalletFile('caravan', wallet)).code).toBe('export_unsupported');
    const back = readWalletFile(writeWalletFile('specter', wallet).text, mainnet);
    expect(back.descriptors.receive).toBe(single.descriptors.receive);
    const unsorted = readWalletFile(vector('bsms/bip129-example-4.bsms'), mainnet);
    expect(failure(() => writeWalletFile('coldcard', { ...exportOf(unsorted), network: mainnet })).code).toBe('export_unsupported');
  });
});
