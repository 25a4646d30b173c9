import { describe, expect, it } from 'vitest';
import { OWASP_ARGON2ID, PasswordHasher, generatePassword } from '../../../src/auth/passwords.js';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher();

  it('hashes with argon2id at the OWASP parameters and verifies', async () => {
    const hash = await hasher.hash('s3cret passphrase');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(OWASP_ARGON2ID).toMatchObject({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    expect(await hasher.verify(hash, 's3cret passphrase')).toBe(true);
    expect(await hasher.verify(hash, 's3cret passphrasE')).toBe(false);
  });

  it('salts: the same password hashes differently each time', async () => {
    expect(await hasher.hash('same')).not.toBe(await hasher.hash('same'));
  });

  it('answers false for an unknown user and for a damaged hash', async () => {
    expect(await hasher.verify(undefined, 'anything')).toBe(false);
    expect(await hasher.verify('not-a-hash', 'anything')).toBe(false);
  });
});

describe('generatePassword', () => {
  it('makes 24 characters of an unambiguous alphabet, different each time', () => {
    const a = generatePassword();
    expect(a).toMatch(/^[A-HJ-NP-Za-km-z2-9]{24}$/);
    expect(generatePassword()).not.toBe(a);
  });
});
