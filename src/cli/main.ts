#!/usr/bin/env node
/** The `wcs` command: `wcs serve` runs the service, `wcs user ...` manages users. Thin over services. */
import { ConfigError, DATA_FOLDER_SETTING, SETTINGS, loadConfig, redactCredentials, type Config } from '../config.js';
import { createRuntime, readVersion, startService, type RunningService } from '../main.js';
import { ServiceError } from '../services/errors.js';
import { flushLogger } from '../api/logging.js';
import { parseArgs } from './args.js';
import { BACKUP_USAGE, BackupError, BackupUsageError, runBackupCommand } from './backup-commands.js';
import { readNewPassword } from './password-input.js';
import { WALLET_USAGE, WalletUsageError, runWalletCommand, splitWalletArgs } from './wallet-commands.js';
import { PSBT_USAGE, PsbtUsageError, runPsbtCommand } from './psbt-commands.js';

const USAGE = `Usage: wcs <command> [options]

Commands:
  serve                      Run the service (HTTP API, probes, docs).
  user add NAME [--admin]    Add a user; the password is read from a prompt or stdin.
  user passwd NAME           Set a user's password (revokes all of their tokens).
  user list                  List users.
  user delete NAME           Delete a user and their tokens.
${BACKUP_USAGE}
${WALLET_USAGE}
${PSBT_USAGE}
  help                       Show this text.
  version                    Show the version.

Options (each also as a SERVICE_* environment variable or in <data_folder>/config.json):
${[DATA_FOLDER_SETTING, ...SETTINGS].map((s) => `  ${s.flag.padEnd(28)} ${s.env}`).join('\n')}
`;

class UsageError extends Error {}

const SHUTDOWN_GRACE_MS = 15_000;

function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function serve(config: Config): Promise<void> {
  const running: RunningService = await startService(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.logger.info({ signal }, 'shutting down');
    // In-flight requests get a bounded time; a client that never reads must not block the exit.
    setTimeout(() => {
      running.logger.error({ graceMs: SHUTDOWN_GRACE_MS }, 'shutdown took too long; exiting');
      void flushLogger(running.logger).finally(() => process.exit(1));
    }, SHUTDOWN_GRACE_MS).unref();
    running.close().then(
      () => flushLogger(running.logger).finally(() => process.exit(0)),
      (error: unknown) => {
        running.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

async function user(config: Config, words: string[], switches: Set<string>): Promise<void> {
  const [action, name, ...extra] = words;
  if (extra.length > 0) throw new UsageError(`Unexpected argument ${extra[0]}`);
  const needsName = action === 'add' || action === 'passwd' || action === 'delete';
  if (needsName && !name) throw new UsageError(`wcs user ${action} needs a user name`);
  if (!needsName && action !== 'list') throw new UsageError(`Unknown user command ${action ?? '(none)'}`);
  const runtime = await createRuntime(config);
  try {
    const users = runtime.services.users;
    switch (action) {
      case 'add': {
        const added = await users.addUser(name ?? '', await readNewPassword(), { admin: switches.has('--admin') });
        out(`Added user ${added.name}${added.isAdmin ? ' (admin)' : ''}`);
        break;
      }
      case 'passwd': {
        const { revokedTokens } = await users.changePassword(name ?? '', await readNewPassword());
        out(`Changed the password of ${name}; revoked ${revokedTokens} token(s)`);
        break;
      }
      case 'delete':
        await users.deleteUser(name ?? '');
        out(`Deleted user ${name} and their tokens`);
        break;
      case 'list':
        for (const u of await users.listUsers()) {
          out(`${u.name}\t${u.isAdmin ? 'admin' : 'user'}\t${new Date(u.createdAt).toISOString()}`);
        }
        break;
    }
  } finally {
    await runtime.close();
  }
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'wallet') return wallet(argv.slice(1));
  const { words, switches, configFlags } = parseArgs(argv, ['--admin', '--force', '--help', '-h', '--version']);
  const [command, ...rest] = words;
  if (switches.has('--version') || command === 'version') return out(readVersion());
  if (switches.has('--help') || switches.has('-h') || command === 'help' || command === undefined) return out(USAGE);
  if (switches.has('--admin') && !(command === 'user' && rest[0] === 'add')) throw new UsageError('--admin belongs to "wcs user add"');
  if (switches.has('--force') && command !== 'backup' && command !== 'restore') throw new UsageError('--force belongs to "wcs backup" and "wcs restore"');
  // psbt commands take flags of their own (--user, --to, ...) besides the configuration flags.
  if (command === 'psbt') return out(await runPsbtCommand(rest, configFlags, process.env));
  const config = loadConfig({ flags: configFlags, env: process.env });
  if (command === 'serve') {
    if (rest.length > 0) throw new UsageError(`Unexpected argument ${rest[0]}`);
    return serve(config);
  }
  if (command === 'user') return user(config, rest, switches);
  if (command === 'backup' || command === 'restore') return out(await runBackupCommand(command, config, rest, switches.has('--force')));
  throw new UsageError(`Unknown command ${command}`);
}

async function wallet(argv: readonly string[]): Promise<void> {
  const { options, rest } = splitWalletArgs(argv);
  const { words, configFlags } = parseArgs(rest, []);
  out(await runWalletCommand(loadConfig({ flags: configFlags, env: process.env }), words, options));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof BackupUsageError || error instanceof PsbtUsageError || error instanceof WalletUsageError) {
    process.stderr.write(`wcs: ${error.message}\nRun "wcs help" for usage.\n`);
    process.exit(2);
  }
  if (error instanceof ConfigError || error instanceof ServiceError || error instanceof BackupError) {
    process.stderr.write(`wcs: ${error.message}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
  process.stderr.write(`wcs: ${redactCredentials(error instanceof Error ? error.message : String(error))}\n`);
  process.exit(1);
});
