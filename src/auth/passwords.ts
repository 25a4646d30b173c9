/** Password hashing with argon2id at the OWASP-recommended parameters (19 MiB, 2 passes, 1 lane). */
import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

export const OWASP_ARGON2ID: Options = {
  algorithm: 2 as Algorithm, // Argon2id (a const enum in the package's types)
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export class PasswordHasher {
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly options: Options = OWASP_ARGON2ID) {}

  hash(password: string): Promise<string> {
    return hash(password, this.options);
  }

  /**
   * Checks a password against a stored hash. With no hash (an unknown user) it still spends
   * one verification on a throw-away hash, so an unknown name costs the same time as a wrong password.
   */
  async verify(storedHash: string | undefined, password: string): Promise<boolean> {
    if (storedHash === undefined) {
      await verify(await this.dummy(), password).catch(() => false);
      return false;
    }
    try {
      return await verify(storedHash, password);
    } catch {
      return false; // a damaged hash never lets anyone in
    }
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= hash(randomBytes(16).toString('hex'), this.options));
  }
}

/** A random password for a generated account: 24 characters from an unambiguous alphabet. */
export function generatePassword(length = 24): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(length * 2);
  let out = '';
  // Rejection sampling keeps every character equally likely.
  for (const byte of bytes) {
    if (byte >= 256 - (256 % alphabet.length)) continue;
    out += alphabet[byte % alphabet.length];
    if (out.length === length) return out;
  }
  return out + generatePassword(length - out.length);
}
