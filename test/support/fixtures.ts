/** Loads the vendored Bitcoin Core regtest fixtures (see test/fixtures/PROVENANCE.md). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StoredWallet } from '../../src/store/repositories.js';

const dir = fileURLToPath(new URL('../fixtures/regtest/', import.meta.url));

export function loadFixture<T = any>(name: 'blocks' | 'keys' | 'psbts' | 'rpc' | 'timeline' | 'wallets'): T {
  return JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')) as T;
}

/**
 * A fixture wallet as the store holds it before its first sync (regtest, owned by alice, gap limit 20), for tests
 * that put wallets in a store or a state directly; `fields` name it (id, alias, name) or change the rest.
 */
export function storedFixtureWallet(name: 'w_wpkh' | 'w_wsh2of3', fields: Partial<StoredWallet> & Pick<StoredWallet, 'id' | 'alias' | 'name'>): StoredWallet {
  const fixture = loadFixture('wallets')[name];
  return {
    description: '',
    ownerName: 'alice',
    network: 'regtest',
    receiveDescriptor: fixture.recv_descriptor,
    changeDescriptor: fixture.change_descriptor,
    addressType: 'bech32',
    sigsRequired: 1,
    sigsTotal: 1,
    keys: [],
    gapLimit: 20,
    birthday: 0,
    createdAt: 1_700_000_000_000,
    revision: 0,
    tip: null,
    ...fields,
  };
}
