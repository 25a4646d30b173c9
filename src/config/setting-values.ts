/**
 * Parsing and checking of one setting's text, shared by the settings' entries. Each throws an Error whose
 * message says what the value must be; loadConfig puts the setting's name in front of it.
 */
import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

const TRUE_WORDS = ['true', '1', 'yes'];
const FALSE_WORDS = ['false', '0', 'no'];

/** `True`, `true`, `1`, `yes` or `False`, `false`, `0`, `no`; empty (a variable set to nothing): `byDefault`. */
export function trueOrFalse(text: string, byDefault: boolean): boolean {
  const word = text.trim().toLowerCase();
  if (word === '') return byDefault;
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  throw new Error('must be True or False');
}

/** A whole number from `min` to `max`, digits only (no sign, no decimals). */
export function integer(text: string, min: number, max: number): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new Error(`must be a whole number from ${min} to ${max}`);
  const value = Number(text);
  if (value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}`);
  return value;
}

/** A plain decimal number from `min` to `max` (`5`, `0.25`): no sign, exponent, hex or other notation. */
export function decimal(text: string, min: number, max: number, message: string): number {
  if (!/^\s*\d+(?:\.\d+)?\s*$/.test(text)) throw new Error(message);
  const value = Number(text);
  if (value < min || value > max) throw new Error(message);
  return value;
}

/** One of `allowed`, in any case. */
export function oneOf<T extends string>(text: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === text.trim().toLowerCase());
  if (!found) throw new Error(`must be one of ${allowed.join(', ')}`);
  return found;
}

// Labels of letters, digits, '-' and '_' (container service names use '_'), with the root's trailing dot allowed
// (`wcs.example.`); whether the name resolves, and to what, is found out when it is used.
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** A host name (not an IP address: digits and dots only are none). */
export function isHostName(text: string): boolean {
  return HOST_NAME.test(text) && !/^[0-9.]+$/.test(text);
}

/** An IPv4 or IPv6 address (brackets allowed) or a host name; not a URL, not a port. */
export function hostAddress(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error('must not be empty');
  const unbracketed = /^\[.*\]$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  if (isIP(unbracketed) !== 0) return unbracketed;
  if (isHostName(trimmed)) return trimmed;
  throw new Error('must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or a host name, without scheme or port');
}

/** Comma-separated IP addresses or CIDR ranges (`10.0.0.0/8`, `fd00::/8`); empty: none. */
export function addressesOrRanges(text: string): string[] {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const version = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (version === 0 || !prefixOk || rest.length > 0) throw new Error(`"${entry}" is not an IP address or a range like 10.0.0.0/8`);
  }
  return entries;
}

/** The trimmed text, read by `parse` when given; empty (or only spaces): none. */
export function optionalText(text: string): string | undefined;
export function optionalText<T>(text: string, parse: (given: string) => T): T | undefined;
export function optionalText<T>(text: string, parse?: (given: string) => T): T | string | undefined {
  const given = text.trim();
  if (given === '') return undefined;
  return parse ? parse(given) : given;
}

/** A SQLite file path (or `sqlite:<path>`) or a `postgres://` address; empty: none (SQLite in the data folder). */
export function databaseAddress(text: string): string | undefined {
  const url = optionalText(text);
  if (url === undefined) return undefined;
  if (/^postgres(ql)?:\/\//i.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new Error('not a valid postgres:// address');
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    throw new Error('use a SQLite file path or a postgres:// address');
  }
  return url;
}

/** `~` and `~/...` in the operator's home folder; any other path as it is. */
export function expandHome(path: string): string {
  return path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

/** An absolute (or `~/`) path of a folder that exists; empty: none. */
export function existingFolder(text: string): string | undefined {
  const given = optionalText(text);
  if (given === undefined) return undefined;
  const path = expandHome(given);
  if (!isAbsolute(path)) throw new Error('must be an absolute path (or start with ~/)');
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder) throw new Error('must be a folder that exists and can be read');
  return path;
}
