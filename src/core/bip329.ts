/**
 * BIP329 wallet labels as JSON Lines: one `{type, ref, label?, origin?, spendable?}` object per line.
 * Reading checks every line and reports each faulty one by number, so an import is all or nothing.
 * `modified` (ISO-8601, the label's last change) is this service's own extension, used to merge
 * "newer wins"; BIP329 readers ignore fields they do not know.
 */
import { decodeAddress } from './address.js';
import { CoreError } from './errors.js';
import { parseExtendedPublicKey } from './keys/extended-key.js';
import type { Network } from './network.js';
import { textProblem } from './text.js';

export const BIP329_TYPES = ['tx', 'addr', 'pubkey', 'input', 'output', 'xpub', 'spscan'] as const;
export type Bip329Type = (typeof BIP329_TYPES)[number];

export interface Bip329Record {
  /** 1-based line number in the file. */
  line: number;
  /** One of BIP329_TYPES, or another type a later version defines (kept, never applied). */
  type: string;
  ref: string;
  label?: string;
  origin?: string;
  spendable?: boolean;
  /** Epoch milliseconds of `modified`. */
  modified?: number;
}

export interface Bip329LineError {
  line: number;
  message: string;
}

export interface Bip329ReadOptions {
  network: Network;
  maxLabelChars: number;
  maxLines: number;
}

const TXID = /^[0-9a-f]{64}$/;
const OUTPOINT = /^([0-9a-f]{64}):(0|[1-9][0-9]{0,9})$/;
const PUBKEY = /^([0-9a-f]{64}|0[23][0-9a-f]{64}|04[0-9a-f]{128})$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Why a record's reference is malformed for its type, or undefined when it is fine. */
function refProblem(type: string, ref: string, network: Network): string | undefined {
  switch (type) {
    case 'tx':
      return TXID.test(ref) ? undefined : 'ref must be a txid (64 lower-case hex digits)';
    case 'input':
    case 'output': {
      const match = OUTPOINT.exec(ref);
      return match && Number(match[2]) <= 0xffffffff ? undefined : 'ref must be txid:index';
    }
    case 'pubkey':
      return PUBKEY.test(ref) ? undefined : 'ref must be a 32, 33 or 65 byte public key in hex';
    case 'addr':
    case 'xpub':
      try {
        if (type === 'addr') decodeAddress(ref, network);
        else parseExtendedPublicKey(ref, network);
        return undefined;
      } catch (error) {
        if (error instanceof CoreError) return `ref: ${error.message}`;
        throw error;
      }
    default:
      return undefined;
  }
}

/** Checks of references a file repeats (its wallet's few keys), by reference: an xpub costs two hashes and a point to check. */
type RefChecks = Map<string, string | undefined>;

function refProblemOnce(type: string, ref: string, network: Network, checked: RefChecks): string | undefined {
  if (type !== 'xpub') return refProblem(type, ref, network);
  if (!checked.has(ref)) checked.set(ref, refProblem(type, ref, network));
  return checked.get(ref);
}

function readLine(text: string, line: number, options: Bip329ReadOptions, checked: RefChecks): Bip329Record | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object';
  const { type, ref, label, origin, spendable, modified } = value as Record<string, unknown>;
  if (typeof type !== 'string' || type === '') return 'type must be text';
  if (typeof ref !== 'string' || ref === '') return 'ref must be text';
  if (label !== undefined && typeof label !== 'string') return 'label must be text';
  if (typeof label === 'string' && label.length > options.maxLabelChars) return `label has more than ${options.maxLabelChars} characters`;
  const labelProblem = typeof label === 'string' ? textProblem(label) : undefined;
  if (labelProblem) return `label ${labelProblem}`;
  if (origin !== undefined && typeof origin !== 'string') return 'origin must be text';
  if (spendable !== undefined && typeof spendable !== 'boolean') return 'spendable must be true or false';
  if (spendable !== undefined && type !== 'output') return 'spendable is only for outputs';
  let modifiedMs: number | undefined;
  if (modified !== undefined) {
    modifiedMs = typeof modified === 'string' && ISO_TIME.test(modified) ? Date.parse(modified) : NaN;
    if (!Number.isFinite(modifiedMs)) return 'modified must be an ISO-8601 time such as 2025-01-23T11:40:35Z';
  }
  const problem = refProblemOnce(type, ref, options.network, checked);
  if (problem) return problem;
  return {
    line,
    type,
    ref,
    ...(label !== undefined ? { label } : {}),
    ...(origin !== undefined ? { origin } : {}),
    ...(spendable !== undefined ? { spendable } : {}),
    ...(modifiedMs !== undefined ? { modified: modifiedMs } : {}),
  };
}

type Bip329Read = { records: Bip329Record[]; errors: Bip329LineError[] };

/**
 * The lines of a file, `part` at a time, cut as they are reached (one cut of a 15 MB file holds the thread):
 * a final newline ends the last line (as files are written), it does not start another.
 */
function* linesInParts(text: string, part: number): Generator<string[]> {
  let start = 0;
  while (start < text.length) {
    const lines: string[] = [];
    while (lines.length < part && start < text.length) {
      const newline = text.indexOf('\n', start);
      const end = newline < 0 ? text.length : newline;
      lines.push(text.slice(start, end));
      start = end + 1;
    }
    yield lines;
  }
}

const tooManyLines = (options: Bip329ReadOptions): Bip329Read => ({ records: [], errors: [{ line: options.maxLines + 1, message: `a label file has at most ${options.maxLines} lines` }] });

/** A longer line is no label record (a label, a reference and an origin descriptor fit many times over); it is refused unparsed. */
const MAX_LINE_CHARS = 65_536;
/** Lines read between two pauses: a few milliseconds' work. */
const LINES_PER_PART = 200;

/** Reads `lines`, the first of which is line `first + 1` of the file. */
function readLines(lines: readonly string[], first: number, options: Bip329ReadOptions, checked: RefChecks, read: Bip329Read): void {
  lines.forEach((raw, i) => {
    const line = first + i + 1;
    const trimmed = raw.trim();
    if (trimmed === '') return;
    if (trimmed.length > MAX_LINE_CHARS) {
      read.errors.push({ line, message: `a line has at most ${MAX_LINE_CHARS} characters` });
      return;
    }
    const result = readLine(trimmed, line, options, checked);
    if (typeof result === 'string') read.errors.push({ line, message: result });
    else read.records.push(result);
  });
}

/** Every record of a BIP329 file, or every faulty line (blank lines are allowed). */
export function readBip329(text: string, options: Bip329ReadOptions): Bip329Read {
  const read: Bip329Read = { records: [], errors: [] };
  const checked: RefChecks = new Map();
  let first = 0;
  for (const lines of linesInParts(text, LINES_PER_PART)) {
    if (first + lines.length > options.maxLines) return tooManyLines(options);
    readLines(lines, first, options, checked, read);
    first += lines.length;
  }
  return read;
}

/** `readBip329`, awaiting `pause()` between parts of lines: a large file is read while other work goes on. */
export async function readBip329InParts(text: string, options: Bip329ReadOptions, pause: () => Promise<void>): Promise<Bip329Read> {
  const read: Bip329Read = { records: [], errors: [] };
  const checked: RefChecks = new Map();
  let first = 0;
  for (const lines of linesInParts(text, LINES_PER_PART)) {
    if (first > 0) await pause();
    if (first + lines.length > options.maxLines) return tooManyLines(options);
    readLines(lines, first, options, checked, read);
    first += lines.length;
  }
  return read;
}

export interface Bip329Output {
  type: Bip329Type;
  ref: string;
  label: string;
  spendable?: boolean;
  /** Epoch milliseconds; written as `modified` when above 0. */
  modified?: number;
}

/** JSON Lines, one record per line in the given order, `\n` after each. */
export function writeBip329(records: readonly Bip329Output[]): string {
  return records
    .map((r) =>
      JSON.stringify({
        type: r.type,
        ref: r.ref,
        label: r.label,
        ...(r.spendable !== undefined ? { spendable: r.spendable } : {}),
        ...(r.modified ? { modified: new Date(r.modified).toISOString() } : {}),
      }),
    )
    .map((line) => `${line}\n`)
    .join('');
}
