/**
 * Keys of a multisig wallet taken from single-signature account paths (BIP44, BIP49, BIP84, BIP86 purposes):
 * such a wallet works, and funds may already be in it, so it is accepted; but the same key also serves a
 * single-signature wallet, and signing devices that check paths refuse or warn. Multisig accounts use BIP48
 * (`m/48h/...`) or BIP87 (`m/87h/...`).
 */
const SINGLE_SIGNATURE_PURPOSES: ReadonlyMap<string, string> = new Map([
  ['44', 'BIP44'],
  ['49', 'BIP49'],
  ['84', 'BIP84'],
  ['86', 'BIP86'],
]);

/** The purpose of an origin path (`m/84h/1h/0h`, also written `m/84'/1'/0'`), when hardened. */
function hardenedPurpose(derivation: string): string | undefined {
  return /^m\/(\d+)[h'H]/.exec(derivation)?.[1];
}

/**
 * The warning for a wallet of more than one key whose key origins use a single-signature purpose, naming those
 * keys (position, fingerprint, path); undefined when there is nothing to warn about.
 */
export function singleSignaturePathWarning(keys: readonly { fingerprint: string; derivation: string }[]): string | undefined {
  if (keys.length < 2) return undefined;
  const named = keys.flatMap((key, i) => {
    const bip = SINGLE_SIGNATURE_PURPOSES.get(hardenedPurpose(key.derivation) ?? '');
    return bip ? [`key ${i + 1} (${key.fingerprint}, ${key.derivation}, ${bip})`] : [];
  });
  if (named.length === 0) return undefined;
  const which = named.length === 1 ? `${named[0]} comes` : `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]} come`;
  return (
    `This multisig wallet's ${which} from a single-signature account path. Multisig keys normally come from m/48h/... (BIP48) or m/87h/... (BIP87): ` +
    'such a key also serves a single-signature wallet, and some signing devices refuse or warn when asked to sign with it. ' +
    'The wallet works as given; check the path with each cosigner before sending more to it.'
  );
}
