#!/usr/bin/env node
/** The `wcs` command: `wcs serve` runs the service, the other commands manage users, wallets, PSBTs and backups. */
import { CommanderError } from 'commander';
import { ConfigError, redactCredentials } from '../config.js';
import { ServiceError } from '../services/errors.js';
import { SigningKeyMismatchError } from '../services/signing-key-check.js';
import { BackupUsageError, NoStoreError, PsbtUsageError, WalletUsageError } from './errors.js';
import { USAGE_EXIT_CODE, USAGE_HINT, buildProgram } from './program.js';
import { settingFlagWithoutValue } from './setting-options.js';
import { shown } from './terminal-text.js';

/**
 * A reader that stops early (`wcs --help | head`) closes the pipe: the rest of a command's output has nowhere to
 * go, so the command ends quietly, with status 0. The service (`serve`) runs on without its output instead
 * (its log ends, api/logging.ts).
 */
function endQuietlyWhenOutputCloses(keepRunning: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (!keepRunning) process.exit(0);
    });
  }
}

async function main(argv: readonly string[]): Promise<void> {
  endQuietlyWhenOutputCloses(argv[0] === 'serve');
  const program = buildProgram();
  // Without a command: the overview, as "wcs help" (commander would print it as an error).
  if (argv.length === 0) return void program.outputHelp();
  // Commander answers "wcs frobnicate --help" with the global help; naming the unknown command helps more.
  const [first] = argv;
  if (first !== undefined && !first.startsWith('-') && !program.commands.some((c) => c.name() === first)) {
    program.error(`unknown command '${first}'`, { code: 'commander.unknownCommand', exitCode: USAGE_EXIT_CODE });
  }
  // Commander would take the next flag as the value of a setting given without one.
  const withoutValue = settingFlagWithoutValue(argv);
  if (withoutValue !== undefined) {
    program.error(`option '${withoutValue} <VALUE>' argument missing`, { code: 'commander.optionMissingArgument', exitCode: USAGE_EXIT_CODE });
  }
  await program.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  // Commander has already printed its message (or the help, or the version).
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    return;
  }
  if (error instanceof BackupUsageError || error instanceof PsbtUsageError || error instanceof WalletUsageError) {
    process.stderr.write(`wcs: ${shown(error.message)}\n${USAGE_HINT}\n`);
    process.exit(USAGE_EXIT_CODE);
  }
  // Loaded only now: a refused backup or restore has loaded it already, and nothing else needs it.
  const { BackupError } = await import('../store/backup.js');
  if (error instanceof ConfigError || error instanceof ServiceError || error instanceof BackupError || error instanceof NoStoreError || error instanceof SigningKeyMismatchError) {
    process.stderr.write(`wcs: ${shown(error.message)}\n`);
    process.exit(error instanceof ConfigError || error instanceof SigningKeyMismatchError ? 2 : 1);
  }
  process.stderr.write(`wcs: ${shown(redactCredentials(error instanceof Error ? error.message : String(error)))}\n`);
  process.exit(1);
});
