#!/usr/bin/env node
/** The `wcs` command: `wcs serve` runs the service, `wcs user ...` manages users. Thin over services. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, redactCredentials, type Config } from '../config.js';
import { INITIAL_ADMIN_PASSWORD_FILE, SigningKeyMismatchError, createRuntime, readVersion, startService, type RunningService } from '../main.js';
import { ServiceError } from '../services/errors.js';
import { ADMIN_USER, OWNS_WALLETS_HINT, type DeleteUserWallets, type DeletedUser } from '../services/users.js';
import { flushLogger } from '../api/logging.js';
import { parseArgs } from './args.js';
import { BackupError, BackupUsageError, runBackupCommand } from './backup-commands.js';
import { GLOBAL_USAGE, commandUsage, helpTopic } from './help.js';
import { readNewPassword } from './password-input.js';
import { WalletUsageError, runWalletCommand, splitWalletArgs } from './wallet-commands.js';
import { PsbtUsageError, runPsbtCommand } from './psbt-commands.js';
import { NoStoreError, requireExistingStore } from './store-check.js';

class UsageError extends Error {}

const SHUTDOWN_GRACE_MS = 15_000;

function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function serve(config: Config, replaceSigningKey: boolean): Promise<void> {
  const running: RunningService = await startService(config, { replaceSigningKey });
  process.stderr.write(`${startLine(config, running.url)}\n`);
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

/** The one plain line at start: where the service listens, and whether the REST API and docs are on. */
export function startLine(config: Config, url: string): string {
  const api = config.apiActive
    ? `REST API on at ${url}/api/v1alpha, docs at ${url}/docs/api`
    : 'REST API and docs off (every /api path answers 404); turn them on with SERVICE_API_ACTIVE=True or --api-active';
  return `wcs: listening on ${url} (data folder ${config.dataFolder}); ${api}`;
}

function deletedText(d: DeletedUser): string {
  const parts = [`Deleted user ${d.name}`, `${d.tokens} token(s)`, `${d.sharesRemoved} share(s) of other users' wallets`];
  if (d.walletsDeleted.length > 0) parts.push(`wallet(s) ${d.walletsDeleted.join(', ')} with ${d.psbtsDeleted} PSBT(s) and their signatures`);
  let text = parts.join(', ');
  if (d.walletsTransferred.length > 0) text += `; wallet(s) ${d.walletsTransferred.join(', ')} now owned by ${d.transferredTo ?? ''}`;
  return text;
}

/** The first-start password file holds the bootstrap admin's password: stale once it changes. */
function removeInitialPasswordFile(config: Config, name: string): boolean {
  if (name !== ADMIN_USER) return false;
  const path = join(config.dataFolder, INITIAL_ADMIN_PASSWORD_FILE);
  try {
    rmSync(path);
    return true;
  } catch {
    return false;
  }
}

async function user(config: Config, words: string[], switches: Set<string>, transferTo: string | undefined): Promise<void> {
  const [action, name, ...extra] = words;
  if (extra.length > 0) throw new UsageError(`Unexpected argument ${extra[0]}`);
  const needsName = action === 'add' || action === 'passwd' || action === 'delete';
  if (needsName && !name) throw new UsageError(`wcs user ${action} needs a user name`);
  if (!needsName && action !== 'list') throw new UsageError(`Unknown user command ${action ?? '(none)'}`);
  if ((transferTo !== undefined || switches.has('--delete-wallets')) && action !== 'delete') {
    throw new UsageError('--transfer-wallets-to and --delete-wallets belong to "wcs user delete"');
  }
  if (transferTo !== undefined && switches.has('--delete-wallets')) throw new UsageError('give either --transfer-wallets-to USER or --delete-wallets, not both');
  await requireExistingStore(config);
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
        if (removeInitialPasswordFile(config, name ?? '')) out(`Removed the first-start password file ${INITIAL_ADMIN_PASSWORD_FILE}`);
        break;
      }
      case 'delete': {
        const wallets: DeleteUserWallets =
          transferTo !== undefined ? { action: 'transfer', to: transferTo } : switches.has('--delete-wallets') ? { action: 'delete' } : { action: 'refuse' };
        try {
          out(deletedText(await users.deleteUser(name ?? '', { wallets })));
        } catch (error) {
          if (error instanceof ServiceError && error.code === 'user_owns_wallets') {
            throw new ServiceError(error.kind, error.code, error.message.replace(OWNS_WALLETS_HINT, 'give --transfer-wallets-to USER or --delete-wallets; nothing was deleted'));
          }
          throw error;
        }
        removeInitialPasswordFile(config, name ?? '');
        break;
      }
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

/** Takes `--transfer-wallets-to USER` (or `=USER`) out of the config flags. */
function takeValueFlag(flags: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i] ?? '';
    if (flag === name) {
      value = flags[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
      flags.splice(i, 2);
      i--;
    } else if (flag.startsWith(`${name}=`)) {
      value = flag.slice(name.length + 1);
      flags.splice(i, 1);
      i--;
    }
  }
  return value;
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    const topic = helpTopic(argv);
    const usage = commandUsage(topic);
    if (usage === undefined) throw new UsageError(`Unknown command ${topic[0] ?? ''}`);
    return out(usage.trimEnd());
  }
  if (argv[0] === 'wallet') return wallet(argv.slice(1));
  const { words, switches, configFlags } = parseArgs(argv, ['--admin', '--force', '--delete-wallets', '--replace-jwt-key', '--version']);
  const [command, ...rest] = words;
  if (switches.has('--version') || command === 'version') return out(readVersion());
  if (command === undefined) return out(GLOBAL_USAGE.trimEnd());
  if (switches.has('--admin') && !(command === 'user' && rest[0] === 'add')) throw new UsageError('--admin belongs to "wcs user add"');
  if (switches.has('--force') && command !== 'backup' && command !== 'restore') throw new UsageError('--force belongs to "wcs backup" and "wcs restore"');
  if (switches.has('--delete-wallets') && command !== 'user') throw new UsageError('--delete-wallets belongs to "wcs user delete"');
  if (switches.has('--replace-jwt-key') && command !== 'serve') throw new UsageError('--replace-jwt-key belongs to "wcs serve"');
  // psbt commands take flags of their own (--user, --to, ...) besides the configuration flags.
  if (command === 'psbt') return out(await runPsbtCommand(rest, configFlags, process.env));
  const transferTo = command === 'user' ? takeValueFlag(configFlags, '--transfer-wallets-to') : undefined;
  const config = loadConfig({ flags: configFlags, env: process.env });
  if (command === 'serve') {
    if (rest.length > 0) throw new UsageError(`Unexpected argument ${rest[0]}`);
    return serve(config, switches.has('--replace-jwt-key'));
  }
  if (command === 'user') return user(config, rest, switches, transferTo);
  if (command === 'backup' || command === 'restore') return out(await runBackupCommand(command, config, rest, switches.has('--force')));
  throw new UsageError(`Unknown command ${command}`);
}

async function wallet(argv: readonly string[]): Promise<void> {
  const { options, rest } = splitWalletArgs(argv);
  const { words, configFlags } = parseArgs(rest, []);
  const config = loadConfig({ flags: configFlags, env: process.env });
  out(await runWalletCommand(config, words, options, undefined, requireExistingStore));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof BackupUsageError || error instanceof PsbtUsageError || error instanceof WalletUsageError) {
    process.stderr.write(`wcs: ${error.message}\nRun "npx wcs --help" (or "npx wcs <command> --help") for usage.\n`);
    process.exit(2);
  }
  if (error instanceof ConfigError || error instanceof ServiceError || error instanceof BackupError || error instanceof NoStoreError || error instanceof SigningKeyMismatchError) {
    process.stderr.write(`wcs: ${error.message}\n`);
    process.exit(error instanceof ConfigError || error instanceof SigningKeyMismatchError ? 2 : 1);
  }
  process.stderr.write(`wcs: ${redactCredentials(error instanceof Error ? error.message : String(error))}\n`);
  process.exit(1);
});
