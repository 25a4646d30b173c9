/** BIP32 derivation paths as text (`m/84h/1h/0h`, `84'/1'/0'`) and as child numbers. */
import { KeyError } from '../errors.js';
import { HARDENED } from './derive.js';
import { quoteInput } from '../text.js';

const STEP = /^(0|[1-9][0-9]{0,9})(['h]?)$/;

/** One path element: a decimal index below 2^31, optionally followed by `h` or `'` (hardened). */
export function parsePathStep(text: string): number {
  const match = STEP.exec(text);
  if (!match) throw new KeyError('invalid_path', `Invalid derivation step ${quoteInput(text, 20)}`);
  const value = Number(match[1]);
  if (value >= HARDENED) throw new KeyError('invalid_path', `Derivation index ${value} is out of range (at most ${HARDENED - 1})`);
  return match[2] ? value + HARDENED : value;
}

/** Parses `m/84'/1'/0'`, `m/84h/1h/0h`, `84h/1h/0h` or `m` into child numbers. */
export function parsePath(text: string): number[] {
  if (typeof text !== 'string') throw new KeyError('invalid_path', 'Derivation path must be text');
  const parts = text.split('/');
  if (parts[0] === 'm') parts.shift();
  if (parts.length === 1 && parts[0] === '') throw new KeyError('invalid_path', 'Empty derivation path');
  return parts.map(parsePathStep);
}

export const formatPathStep = (step: number): string => (step >= HARDENED ? `${step - HARDENED}h` : `${step}`);

/** `m/84h/1h/0h` form (the one Bitcoin Core prints in PSBTs). */
export const formatPath = (steps: readonly number[]): string => ['m', ...steps.map(formatPathStep)].join('/');
