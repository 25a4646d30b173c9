/**
 * Private key material in free text: extended private keys (BIP32 and SLIP-132 `xprv`, `tprv`, `yprv`,
 * `zprv`, `uprv`, `vprv`, `Yprv`, `Zprv`, `Uprv`, `Vprv`) and WIF keys. A name or label holding one would
 * put a secret where the service shows it to everyone the wallet is shared with; an error message quoting
 * one would put it in logs and screens.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes, fromHex } from '../bytes.js';

/** Version bytes of extended private keys, mainnet and test networks. */
export const PRIVATE_KEY_VERSIONS: ReadonlySet<number> = new Set([
  0x0488ade4, 0x049d7878, 0x04b2430c, 0x0295b005, 0x02aa7a99, // xprv yprv zprv Yprv Zprv
  0x04358394, 0x044a4e28, 0x045f18bc, 0x024285b5, 0x02575048, // tprv uprv vprv Uprv Vprv
]);

const BASE58_RUN = /[1-9A-HJ-NP-Za-km-z]+/g;
const LONG_RUN = /[1-9A-HJ-NP-Za-km-z]{51}/;
const PRIVATE_PREFIX = /[xtyzuvYZUV]prv/g;
/** WIF version bytes: mainnet, test networks. */
const WIF_VERSIONS = new Set([0x80, 0xef]);
/** Decodes tried per text (a label file checks up to 100,000 labels); pasted keys come first in their run. */
const MAX_DECODES = 8;

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGITS = new Map([...ALPHABET].map((c, i) => [c, BigInt(i)]));

/**
 * The payload of base58check `text` when `accept` takes it, the checksum verified last. BigInt arithmetic and
 * the payload looked at before hashing: @scure/base's decoder took 35 to 85 µs a word, which a file of words
 * made to look like keys would pay on every line. No private key starts with a zero byte (a leading `1`).
 */
function decodes(text: string, accept: (payload: Uint8Array) => boolean): boolean {
  let value = 0n;
  for (const c of text) {
    const digit = DIGITS.get(c);
    if (digit === undefined) return false;
    value = value * 58n + digit;
  }
  const hex = value.toString(16);
  if (hex.length < 10) return false;
  const bytes = fromHex(hex.length % 2 === 0 ? hex : `0${hex}`);
  const payload = bytes.subarray(0, -4);
  return accept(payload) && equalBytes(sha256(sha256(payload)).subarray(0, 4), bytes.subarray(-4));
}

const isExtendedPrivateKey = (payload: Uint8Array): boolean =>
  payload.length === 78 && PRIVATE_KEY_VERSIONS.has(((payload[0]! << 24) | (payload[1]! << 16) | (payload[2]! << 8) | payload[3]!) >>> 0);

/** WIF: version byte, 32-byte key, and 0x01 when the public key is compressed. */
const isWif = (payload: Uint8Array): boolean =>
  WIF_VERSIONS.has(payload[0]!) && (payload.length === 33 || (payload.length === 34 && payload[33] === 1));

/** True when `text` is a WIF private key. */
export const isWifKey = (text: string): boolean => (text.length === 51 || text.length === 52) && decodes(text, isWif);

/** The private keys' places in `text` that decode as one (checksum included): [start, end) pairs. */
function privateKeySpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  if (!LONG_RUN.test(text)) return spans; // most text: no word long enough to be a key
  let tries = 0;
  for (const run of text.matchAll(BASE58_RUN)) {
    const word = run[0];
    // WIF keys are 51 (uncompressed) or 52 (compressed) characters, written as a word of their own.
    if ((word.length === 51 || word.length === 52) && tries++ < MAX_DECODES && decodes(word, isWif)) {
      spans.push([run.index, run.index + word.length]);
      continue;
    }
    if (word.length < 100) continue;
    // An extended private key is 111 or 112 characters, possibly run together with other letters.
    for (const prefix of word.matchAll(PRIVATE_PREFIX)) {
      const found = [111, 112].find((length) => prefix.index + length <= word.length && tries++ < MAX_DECODES && decodes(word.slice(prefix.index, prefix.index + length), isExtendedPrivateKey));
      if (found !== undefined) spans.push([run.index + prefix.index, run.index + prefix.index + found]);
    }
  }
  return spans;
}

/** True when `text` holds an extended private key or a WIF key (decoded, checksum verified). */
export const containsPrivateKey = (text: string): boolean => privateKeySpans(text).length > 0;

const HIDDEN = '(private key hidden)';
/** Base58 words that look like extended private keys, whole or cut short (decoding is not needed to hide them). */
const LOOKS_PRIVATE = /[1-9A-HJ-NP-Za-km-z]*[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{8,}/g;

/** `text` with every private key, and every word that looks like an extended private key, replaced. */
export function hidePrivateKeys(text: string): string {
  let shown = text;
  for (const [start, end] of privateKeySpans(text).reverse()) shown = `${shown.slice(0, start)}${HIDDEN}${shown.slice(end)}`;
  return shown.replace(LOOKS_PRIVATE, HIDDEN);
}
