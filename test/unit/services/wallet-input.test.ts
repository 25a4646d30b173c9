/** Wallet input checks: alias derivation, birthday forms, gap limit, sharing lists, key labels. */
import { describe, expect, it } from 'vitest';
import { aliasFromName, checkAlias, checkBirthday, checkGapLimit, checkKeyLabels, checkShares, resolveKeys } from '../../../src/services/wallet-input.js';
import { ServiceError } from '../../../src/services/errors.js';
import { loadFixture } from '../../support/fixtures.js';

const fieldOf = (work: () => unknown): { kind: string; code: string; path: string | undefined } => {
  try {
    work();
  } catch (error) {
    if (error instanceof ServiceError) return { kind: error.kind, code: error.code, path: error.details.errors?.[0]?.path };
    throw error;
  }
  throw new Error('no error');
};

describe('aliases', () => {
  it('derives URL-safe aliases from names', () => {
    expect(aliasFromName('Family Vault')).toBe('family-vault');
    expect(aliasFromName('  Spénd!! money  ')).toBe('spend-money');
    expect(aliasFromName('***')).toBe('wallet');
    expect(aliasFromName('x'.repeat(100))).toHaveLength(64);
    expect(aliasFromName(`${'a'.repeat(63)} b`)).toBe('a'.repeat(63));
  });

  it('accepts given aliases of [a-z0-9_-]{1,64} only', () => {
    expect(checkAlias('w_wpkh-2')).toBe('w_wpkh-2');
    expect(checkAlias(undefined)).toBeUndefined();
    for (const bad of ['Upper', 'has space', 'a'.repeat(65), 'dot.dot', 7]) expect(fieldOf(() => checkAlias(bad)).path).toBe('/alias');
  });
});

describe('birthdays and gap limits', () => {
  it('reads heights, dates and the default', () => {
    expect(checkBirthday(undefined)).toEqual({ kind: 'tip' });
    expect(checkBirthday(0)).toEqual({ kind: 'height', height: 0 });
    expect(checkBirthday('812345')).toEqual({ kind: 'height', height: 812345 });
    expect(checkBirthday('2024-02-29')).toEqual({ kind: 'date', epochSeconds: Date.UTC(2024, 1, 29) / 1000 });
    for (const bad of [-1, 1.5, '2023-02-29', '2024-13-01', 'yesterday', true]) expect(fieldOf(() => checkBirthday(bad)).path).toBe('/birthday');
  });

  it('defaults the gap limit to 20 and bounds it', () => {
    expect(checkGapLimit(undefined)).toBe(20);
    expect(checkGapLimit(1000)).toBe(1000);
    for (const bad of [0, 1001, 2.5, '20']) expect(fieldOf(() => checkGapLimit(bad)).path).toBe('/gap_limit');
  });
});

describe('sharing and labels', () => {
  it('checks sharing entries and refuses a user listed twice', () => {
    expect(checkShares([{ user: 'bob', access: 'spend' }])).toEqual([{ userName: 'bob', access: 'spend' }]);
    expect(fieldOf(() => checkShares([{ user: 'bob', access: 'read' }, { user: 'bob', access: 'spend' }])).path).toBe('/shared_with/1/user');
    expect(fieldOf(() => checkShares([{ user: 'bob', access: 'owner' }])).path).toBe('/shared_with/0/access');
  });

  it('checks key labels by fingerprint', () => {
    expect(checkKeyLabels([{ fingerprint: 'ABCDEF01', label: 'x' }], '/labels')).toEqual([{ fingerprint: 'abcdef01', label: 'x' }]);
    expect(fieldOf(() => checkKeyLabels([{ fingerprint: 'abc', label: 'x' }], '/labels')).path).toBe('/labels/0/fingerprint');
  });
});

describe('keys', () => {
  const wallets = loadFixture('wallets');
  it('resolves every fixture wallet from its descriptor pair to the same canonical descriptors', () => {
    for (const w of Object.values(wallets) as any[]) {
      const { descriptors } = resolveKeys({ recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor }, 'regtest');
      expect(descriptors.receive).toBe(w.recv_descriptor);
      expect(descriptors.change).toBe(w.change_descriptor);
      expect(descriptors.info.sigsRequired).toBe(w.sigs_required);
    }
  });

  it('maps descriptor problems to 400 with their code and keys of another network to 422', () => {
    const w = (wallets as any).w_wpkh;
    expect(fieldOf(() => resolveKeys({ descriptor: 'wpkh(xyz)' }, 'regtest'))).toMatchObject({ kind: 'invalid_input', path: '/descriptor' });
    expect(fieldOf(() => resolveKeys({ recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor }, 'mainnet'))).toMatchObject({ kind: 'unprocessable', code: 'wrong_network' });
    expect(fieldOf(() => resolveKeys({ recv_descriptor: w.recv_descriptor }, 'regtest'))).toMatchObject({ kind: 'invalid_input', path: '' });
  });
});
