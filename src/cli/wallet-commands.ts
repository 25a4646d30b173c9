/**
 * `wcs wallet import|export|list|show|delete|rescan`: the wallet use cases from the command line, acting as
 * one user (`--user`, default `admin`) on the configured store and node.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { singleSignaturePathWarning } from '../core/descriptor/index.js';
import { createRuntime } from '../main.js';
import type { Principal } from '../services/principal.js';
import { ServiceError } from '../services/errors.js';
import { WalletUsageError } from './errors.js';
import { shown } from './terminal-text.js';

export type WalletAction = 'import' | 'export' | 'list' | 'show' | 'delete' | 'rescan';

/** The value options of wallet commands, keyed by flag (`--user`, `--name`, ...). */
export type WalletOptions = ReadonlyMap<string, string>;

function integerOption(options: WalletOptions, flag: string): number | undefined {
  const text = options.get(flag);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new WalletUsageError(`${flag} must be a whole number`);
  return Number(text);
}

/** The text of a file named on the command line; a missing file is a usage error naming it. */
export function readInputFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new WalletUsageError(`${flag} ${path}: cannot read the file`);
  }
}

/** Writes `text` to `--out` and says so, or returns it for stdout. */
export function output(text: string, out: string | undefined, what: string): string {
  if (out === undefined) return text.replace(/\n$/, '');
  writeFileSync(out, text);
  return `Wrote ${what} to ${out}`;
}

/** Runs one wallet command; returns what to print on stdout. `progress` receives the rescan progress bar. */
export async function runWalletCommand(
  config: Config,
  action: WalletAction,
  /** The wallet of show, delete and rescan. */
  alias: string | undefined,
  options: WalletOptions,
  progress: (line: string) => void = (line) => process.stderr.write(line),
  /** Runs before the store is opened (the CLI refuses a missing store there). */
  beforeOpen: (config: Config) => Promise<void> = async () => {},
  /** A terminal gets a redrawn bar (`\r`); anything else (a pipe, a file) plain lines, one per change. */
  terminal: boolean = process.stderr.isTTY === true,
): Promise<string> {
  await beforeOpen(config);
  const runtime = await createRuntime(config, { createNoFiles: true });
  try {
    const userName = options.get('--user') ?? 'admin';
    const user = await runtime.store.users.find(userName);
    if (!user) throw new ServiceError('not_found', 'user_not_found', `No user ${userName}`);
    const principal: Principal = { userName, isAdmin: user.isAdmin };
    const { reads, admin } = runtime.services.wallets;
    switch (action) {
      case 'import': {
        const birthday = options.get('--birthday');
        const file = options.get('--file');
        if (file === undefined && options.has('--format')) throw new WalletUsageError('--format needs --file');
        const details = await admin.create(principal, {
          ...(file !== undefined ? { import: readInputFile('--file', file), import_format: options.get('--format') } : {}),
          name: options.get('--name'),
          alias: options.get('--alias'),
          description: options.get('--description'),
          descriptor: options.get('--descriptor'),
          recv_descriptor: options.get('--recv-descriptor'),
          change_descriptor: options.get('--change-descriptor'),
          birthday: birthday !== undefined && /^\d+$/.test(birthday) ? Number(birthday) : birthday,
          gap_limit: integerOption(options, '--gap-limit'),
        });
        const warning = singleSignaturePathWarning(details.keys);
        if (warning) process.stderr.write(`wcs: warning: ${warning}\n`);
        return `Imported wallet ${shown(details.alias)} (${shown(details.name)}): ${details.address_type}, ${details.sigs_required} of ${details.sigs_total}\nFirst address: ${details.address}`;
      }
      case 'export': {
        const format = options.get('--format');
        if (format === undefined) throw new WalletUsageError('--format is required: descriptor, bsms, coldcard, specter or caravan');
        const file = await runtime.services.wallets.files.export(principal, alias!, format);
        return output(file.text, options.get('--out'), `the ${format} file of wallet ${alias}`);
      }
      case 'list': {
        const list = await reads.list(principal);
        if (list.length === 0) return 'No wallets';
        return list.map((w) => `${shown(w.alias)}\t${shown(w.name)}\t${w.address_type}\t${w.sigs_required}-of-${w.sigs_total}\t${w.balance ? `${w.balance.total.toFixed(8)} BTC` : 'balance unknown: its stored chain data is inconsistent (rescan it)'}`).join('\n');
      }
      case 'show':
        return JSON.stringify(await reads.details(principal, alias!), null, 2);
      case 'delete':
        await admin.delete(principal, alias!);
        return `Deleted wallet ${alias}`;
      default: {
        const { from } = await admin.rescan(principal, alias!, integerOption(options, '--from'));
        if (!runtime.services.chain.source) {
          return `Wallet ${alias} will be scanned again from height ${from} by the running service on its next sync pass; this command was given no node settings (bitcoind_url) to scan it itself`;
        }
        const done = runtime.services.sync.runOnce();
        let finished = false;
        let last = '';
        void done.finally(() => (finished = true)).catch(() => undefined);
        while (!finished) {
          const scan = await reads.scan(principal, alias!);
          if (scan) {
            const line = `${progressBar(scan.progress)} height ${scan.height}`;
            if (terminal) progress(`\r${line}`);
            else if (line !== last) progress(`${line}\n`);
            last = line;
          }
          await Promise.race([done.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 250))]);
        }
        await done;
        progress(terminal ? `\r${progressBar(1)} done\n` : `${progressBar(1)} done\n`);
        return `Rescanned wallet ${alias} from height ${from}`;
      }
    }
  } finally {
    await runtime.close();
  }
}

export function progressBar(fraction: number, width = 30): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${(fraction * 100).toFixed(1).padStart(5)}%`;
}
