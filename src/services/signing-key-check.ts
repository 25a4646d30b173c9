/**
 * Instances sharing a database must sign tokens with one key, or each answers 401 to the tokens of
 * the others. The database keeps a fingerprint of the key (an HMAC of a fixed label under the key:
 * it identifies the key and reveals nothing of it); an instance whose key has another fingerprint
 * refuses to start, unless told that its key replaces the old one.
 */
import { createHmac } from 'node:crypto';
import type { Store } from '../store/repositories.js';

export const SIGNING_KEY_FINGERPRINT = 'jwt_signing_key_fingerprint';
const LABEL = 'wcs jwt signing key fingerprint v1';

export function signingKeyFingerprint(key: Uint8Array): string {
  return createHmac('sha256', key).update(LABEL).digest('hex');
}

/** The key differs from the one the database knows (a configuration problem: exit code 2). */
export class SigningKeyMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningKeyMismatchError';
  }
}

export const SIGNING_KEY_MISMATCH_MESSAGE =
  'The JWT signing key (SERVICE_JWT_KEY, or the key file in the data folder) differs from the key of the other instances ' +
  'on this database, so tokens they issued would be refused here: give every instance the same SERVICE_JWT_KEY. ' +
  'To replace the key on purpose (every token issued so far stops working), stop every instance and start one with ' +
  '"npx wcs serve --replace-jwt-key" (or "npm start -- --replace-jwt-key")';

/** Records the key's fingerprint on first use; refuses another key unless `replace`. Returns whether it was replaced. */
export async function checkSigningKey(store: Store, fingerprint: string, options: { replace?: boolean; now?: number } = {}): Promise<{ replaced: boolean }> {
  const at = options.now ?? Date.now();
  return store.transaction(async (repos) => {
    const known = await repos.settings.setIfAbsent(SIGNING_KEY_FINGERPRINT, fingerprint, at);
    if (known === fingerprint) return { replaced: false };
    if (!options.replace) throw new SigningKeyMismatchError(SIGNING_KEY_MISMATCH_MESSAGE);
    await repos.settings.set(SIGNING_KEY_FINGERPRINT, fingerprint, at);
    return { replaced: true };
  });
}
