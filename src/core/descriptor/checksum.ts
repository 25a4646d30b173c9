/** The BIP380 descriptor checksum (an 8-character BCH code over the descriptor text). */
import { DescriptorError } from './errors.js';

const INPUT_CHARSET = '0123456789()[],\'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#"\\ ';
const CHECKSUM_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0xf5dee51989n, 0xa9fdca3312n, 0x1bab10e32dn, 0x3706b1677an, 0x644d626ffdn];

function polymod(symbols: number[]): bigint {
  let chk = 1n;
  for (const value of symbols) {
    const top = chk >> 35n;
    chk = ((chk & 0x7ffffffffn) << 5n) ^ BigInt(value);
    for (let i = 0; i < 5; i++) if ((top >> BigInt(i)) & 1n) chk ^= GENERATOR[i]!;
  }
  return chk;
}

function expand(text: string): number[] {
  const symbols: number[] = [];
  const groups: number[] = [];
  for (const c of text) {
    const v = INPUT_CHARSET.indexOf(c);
    if (v < 0) throw new DescriptorError('invalid_descriptor', `Invalid character ${JSON.stringify(c)} in descriptor`);
    symbols.push(v & 31);
    groups.push(v >> 5);
    if (groups.length === 3) {
      symbols.push(groups[0]! * 9 + groups[1]! * 3 + groups[2]!);
      groups.length = 0;
    }
  }
  if (groups.length === 1) symbols.push(groups[0]!);
  else if (groups.length === 2) symbols.push(groups[0]! * 3 + groups[1]!);
  return symbols;
}

/** The 8-character checksum of a descriptor body (the text without `#...`). */
export function descriptorChecksum(body: string): string {
  const value = polymod([...expand(body), 0, 0, 0, 0, 0, 0, 0, 0]) ^ 1n;
  let out = '';
  for (let i = 0; i < 8; i++) out += CHECKSUM_CHARSET[Number((value >> BigInt(5 * (7 - i))) & 31n)];
  return out;
}

/**
 * Splits `body#checksum`, verifying the checksum when present. Throws DescriptorError
 * `invalid_checksum` for a malformed or wrong one; the body is returned either way.
 */
export function stripChecksum(text: string): { body: string; checksum: string | undefined } {
  const hash = text.indexOf('#');
  if (hash < 0) {
    expand(text);
    return { body: text, checksum: undefined };
  }
  const body = text.slice(0, hash);
  const checksum = text.slice(hash + 1);
  if (checksum.length !== 8 || [...checksum].some((c) => !CHECKSUM_CHARSET.includes(c))) {
    throw new DescriptorError('invalid_checksum', 'Invalid descriptor checksum: expected 8 characters after #');
  }
  const expected = descriptorChecksum(body);
  if (checksum !== expected) {
    throw new DescriptorError('invalid_checksum', `Wrong descriptor checksum ${checksum} (expected ${expected})`);
  }
  return { body, checksum };
}

export const addChecksum = (body: string): string => `${body}#${descriptorChecksum(body)}`;
