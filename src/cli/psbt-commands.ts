/**
 * `wcs psbt create|list|show|sign-import|broadcast`: the PSBT use cases from the command line,
 * acting as a named user (`--user`, default `admin`), against the configured store and Bitcoin Core.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { createRuntime } from '../main.js';
import type { Principal } from '../services/principal.js';
import { PsbtUsageError } from './errors.js';
import { requireExistingStore } from './store-check.js';

export type PsbtAction = 'list' | 'create' | 'show' | 'sign-import' | 'broadcast';

/** The options of a psbt command: every value option as given (`--to` may repeat), and the switches. */
export interface PsbtFlags {
  values: ReadonlyMap<string, readonly string[]>;
  switches: ReadonlySet<string>;
}

/** `ADDRESS=AMOUNT` with an optional unit suffix: `bcrt1...=0.01`, `bcrt1...=150000sat`. */
export function parseRecipient(text: string, label: string | undefined): Record<string, unknown> {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1) throw new PsbtUsageError(`--to ${text}: expected ADDRESS=AMOUNT`);
  const amountText = text.slice(at + 1).trim().toLowerCase();
  const match = /^([0-9.]+)\s*(btc|sat|sats)?$/.exec(amountText);
  if (!match) throw new PsbtUsageError(`--to ${text}: the amount must be a number, optionally followed by btc or sat`);
  return { address: text.slice(0, at).trim(), amount: match[1], unit: match[2]?.startsWith('sat') ? 'sat' : 'btc', ...(label ? { label } : {}) };
}

function one(flags: PsbtFlags, name: string): string | undefined {
  const list = flags.values.get(name);
  if (list && list.length > 1) throw new PsbtUsageError(`${name} may be given once`);
  return list?.[0];
}

/** Runs one psbt command; returns the text to print. */
export async function runPsbtCommand(
  action: PsbtAction,
  /** The positional arguments: WALLET, then TXID and FILE where the command takes them. */
  args: readonly string[],
  flags: PsbtFlags,
  configFlags: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<string | { bytes: Uint8Array }> {
  // Acting as --user, by default admin, as wallet commands do.
  const userName = one(flags, '--user') ?? 'admin';

  // Text to print, or bytes to write to stdout as they are (a binary PSBT sent to a pipe or file).
  let run: (principal: Principal, services: Awaited<ReturnType<typeof createRuntime>>['services']) => Promise<string | { bytes: Uint8Array }>;
  switch (action) {
    case 'list': {
      const [alias] = args;
      run = async (p, s) => {
        const pending = await s.psbts.list(p, alias!);
        if (pending.length === 0) return 'No pending PSBTs';
        const required = (await s.wallets.reads.details(p, alias!)).sigs_required;
        return pending
          .map(({ txid, record }) => `${txid}\t${record.address.map((a, i) => `${a}=${record.amount[i]}`).join(',')}\tfee_rate=${record.fee_rate}\tsigs=${record.sigs_count} of ${required}`)
          .join('\n');
      };
      break;
    }
    case 'create': {
      const [alias] = args;
      const to = flags.values.get('--to') ?? [];
      if (to.length === 0) throw new PsbtUsageError('wcs psbt create needs at least one --to ADDRESS=AMOUNT');
      const label = one(flags, '--label');
      const feeRate = one(flags, '--fee-rate');
      const subtractFrom = one(flags, '--subtract-from');
      const replaces = one(flags, '--rbf-tx-id');
      const body = {
        recipients: to.map((t) => parseRecipient(t, label)),
        ...(feeRate !== undefined ? { fee_rate: feeRate } : {}),
        ...(subtractFrom !== undefined ? { subtract: true, subtract_from: subtractFrom } : {}),
        ...(replaces !== undefined ? { rbf_tx_id: replaces } : {}),
        rbf: !flags.switches.has('--no-rbf'),
      };
      run = async (p, s) => {
        const { txid, record } = await s.psbts.create(p, alias!, body);
        return `${txid}\nfee ${record.fee} BTC (${record.fee_rate} sat/vB)\n${record.base64}`;
      };
      break;
    }
    case 'show': {
      const [alias, txid] = args;
      const format = one(flags, '--format') ?? 'json';
      const outFile = one(flags, '--out');
      // Binary on a pipe or in a file is what signers import; on a terminal it would be garbage.
      if (format === 'binary' && !outFile && process.stdout.isTTY === true) throw new PsbtUsageError('--format binary needs --out FILE, or stdout sent to a pipe or file');
      const version = one(flags, '--psbt-version') ?? '0';
      if (version !== '0' && version !== '2') throw new PsbtUsageError('--psbt-version must be 0 or 2');
      run = async (p, s) => {
        const found = await s.psbts.get(p, alias!, txid!, version === '2' ? 2 : 0);
        const text = format === 'json' ? JSON.stringify({ result: found.record }, null, 2) : found.base64;
        if (outFile) {
          writeFileSync(outFile, format === 'binary' ? found.psbt : `${text}\n`);
          return `Wrote ${outFile}`;
        }
        if (format === 'binary') return { bytes: found.psbt };
        return text;
      };
      break;
    }
    case 'sign-import': {
      const [alias, txid, file] = args;
      const bytes = readFileSync(file!);
      // A binary PSBT starts with the magic "psbt\xff"; anything else is read as base64 text.
      const copy = bytes.subarray(0, 5).equals(Buffer.from([0x70, 0x73, 0x62, 0x74, 0xff])) ? new Uint8Array(bytes) : bytes.toString('utf8').trim();
      run = async (p, s) => {
        const before = (await s.psbts.get(p, alias!, txid!)).record;
        const record = await s.psbts.update(p, alias!, txid!, copy);
        const required = (await s.wallets.reads.details(p, alias!)).sigs_required;
        if (record.base64 === before.base64) return `Added no signature: the copy holds none the stored PSBT lacks; ${record.sigs_count} of ${required} signature(s) on every input`;
        return `Merged; ${record.sigs_count} of ${required} signature(s) on every input`;
      };
      break;
    }
    case 'broadcast': {
      const [alias, txid] = args;
      run = async (p, s) => (await s.psbts.broadcast(p, alias!, txid!)).txid;
      break;
    }
  }

  const config = loadConfig({ flags: configFlags, env });
  await requireExistingStore(config);
  const runtime = await createRuntime(config, { createNoFiles: true });
  try {
    const user = await runtime.store.users.find(userName);
    // An unknown user sees no wallet at all, as over HTTP.
    const principal: Principal = { userName, isAdmin: user?.isAdmin ?? false };
    return await run(principal, runtime.services);
  } finally {
    await runtime.close();
  }
}
