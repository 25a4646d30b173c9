/**
 * The `wcs` command tree on commander: commands, arguments, options and help. The actions are thin:
 * they hand the parsed words to the modules of each command. Those modules (and the service, store and
 * node client behind them) are loaded when their command runs, so that help, `version` and usage errors
 * answer at once.
 */
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { CONFIG_FILE_NAME, exposedConfigFile, givenSettings, loadConfig, settingOrigins, unknownSettingVariables } from '../config.js';
import { readVersion } from '../version.js';
import { OVERVIEW, commandText, groupNote } from './help.js';
import type { PsbtAction } from './psbt-commands.js';
import { COMMAND_SETTINGS, addSettingOptions, isSettingFlag, settingFlags } from './setting-options.js';
import type { UserAction } from './user-commands.js';
import type { WalletAction } from './wallet-commands.js';
import { printable, shown } from './terminal-text.js';

/** Exit code of a command-line mistake. */
export const USAGE_EXIT_CODE = 2;

export const USAGE_HINT = 'Run "npx wcs --help" (or "npx wcs <command> --help") for usage.';

/** Every command's output: what it prints may quote stored, user-controlled text. */
function out(text: string): void {
  process.stdout.write(`${printable(text)}\n`);
}

/**
 * The configuration from the command's setting options, the environment and config.json, after saying
 * on stderr what would otherwise go unnoticed: variables that set nothing, secrets others may read.
 */
function configOf(command: Command) {
  for (const { name, meant } of unknownSettingVariables(process.env)) {
    process.stderr.write(`wcs: ${shown(name)} is not a setting and is ignored${meant ? ` (did you mean ${meant}?)` : ''}\n`);
  }
  const config = loadConfig({ flags: settingFlags(command), env: process.env });
  const exposed = exposedConfigFile(config.dataFolder);
  if (exposed) {
    process.stderr.write(`wcs: ${exposed.path} holds secrets (${exposed.secrets.join(', ')}) and other users may read it (mode ${exposed.mode}); run: chmod 600 ${exposed.path}\n`);
  }
  return config;
}

/** A subcommand of `parent` with its usage and summary from help.ts (`key`: "user add", ...). */
function subcommand(parent: Command, name: string, key: string): Command {
  const text = commandText(key);
  return parent.command(name).usage(text.usage).description(text.summary);
}

function group(program: Command, name: string): Command {
  return program.command(name).usage('<subcommand> [options]').description(groupNote(name));
}

function userCommands(program: Command): void {
  const user = group(program, 'user');
  const action = (name: UserAction) => async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const options = command.opts<{ admin?: boolean; transferWalletsTo?: string; deleteWallets?: boolean }>();
    // Checked here rather than with commander's conflicts() to keep the wording that says what to do.
    if (options.transferWalletsTo !== undefined && options.deleteWallets === true) {
      command.error('give either --transfer-wallets-to USER or --delete-wallets, not both', { exitCode: USAGE_EXIT_CODE });
    }
    const { runUserCommand } = await import('./user-commands.js');
    await runUserCommand(configOf(command), name, typeof args[0] === 'string' ? args[0] : undefined, options, out);
  };
  addSettingOptions(subcommand(user, 'add', 'user add').argument('<NAME>', 'name of the new user').option('--admin', 'make the user an admin').action(action('add')), COMMAND_SETTINGS.users);
  addSettingOptions(subcommand(user, 'passwd', 'user passwd').argument('<NAME>', 'the user').action(action('passwd')), COMMAND_SETTINGS.users);
  addSettingOptions(subcommand(user, 'list', 'user list').action(action('list')), COMMAND_SETTINGS.network);
  addSettingOptions(
    subcommand(user, 'delete', 'user delete')
      .argument('<NAME>', 'the user to delete')
      .option('--transfer-wallets-to <USER>', "USER becomes the owner of NAME's wallets (shares kept; a share USER had on one of them is dropped, USER owns it now)")
      .option('--delete-wallets', "delete NAME's wallets with their PSBTs and collected signatures")
      .action(action('delete')),
    COMMAND_SETTINGS.network,
  );
}

const WALLET_OPTIONS: Record<WalletAction, ReadonlyArray<[string, string]>> = {
  import: [
    ['--name <NAME>', 'name of the wallet'],
    ['--descriptor <D>', 'one descriptor with <0;1> for receive and change'],
    ['--recv-descriptor <D>', 'receive descriptor (with --change-descriptor)'],
    ['--change-descriptor <D>', 'change descriptor (with --recv-descriptor)'],
    ['--alias <A>', 'short name used in commands and URLs (default: from the name)'],
    ['--description <T>', 'free text'],
    ['--birthday <HEIGHT|YYYY-MM-DD>', 'where the chain scan starts'],
    ['--gap-limit <N>', 'unused addresses watched past the last used one'],
    ['--file <F>', 'a wallet setup file instead of descriptors: descriptors, BSMS, Coldcard, Specter or Caravan'],
    ['--format <FORMAT>', 'the format of --file (default: detected): descriptor, bsms, coldcard, specter, caravan'],
  ],
  export: [
    ['--format <FORMAT>', 'descriptor, bsms, coldcard, specter or caravan'],
    ['--out <FILE>', 'write to FILE instead of printing'],
  ],
  list: [],
  show: [],
  delete: [],
  rescan: [['--from <HEIGHT>', 'height to scan from (default: the birthday)']],
};

function walletCommands(program: Command): void {
  const wallet = group(program, 'wallet');
  for (const name of ['import', 'export', 'list', 'show', 'delete', 'rescan'] as const) {
    const command = subcommand(wallet, name, `wallet ${name}`);
    if (name !== 'import' && name !== 'list') command.argument('<ALIAS>', 'alias of the wallet');
    for (const [flags, description] of WALLET_OPTIONS[name]) command.option(flags, description);
    command.option('--user <NAME>', 'act as this user', 'admin');
    const uses = name === 'import' ? [...COMMAND_SETTINGS.node, 'max_wallets_per_user', 'max_gap_limit'] : name === 'rescan' ? COMMAND_SETTINGS.node : COMMAND_SETTINGS.network;
    addSettingOptions(command, uses).action(async (...args: unknown[]) => {
      const alias = typeof args[0] === 'string' ? args[0] : undefined;
      // wallet-commands reads the options by flag (`--gap-limit`), as its messages name them.
      const options = new Map<string, string>();
      for (const [long, value] of commandOptions(command)) if (typeof value === 'string') options.set(long, value);
      const [{ runWalletCommand }, { requireExistingStore }] = await Promise.all([import('./wallet-commands.js'), import('./store-check.js')]);
      out(await runWalletCommand(configOf(command), name, alias, options, undefined, requireExistingStore));
    });
  }
}

function labelCommands(program: Command): void {
  const labels = group(program, 'labels');
  for (const name of ['export', 'import'] as const) {
    const command = subcommand(labels, name, `labels ${name}`).argument('<ALIAS>', 'alias of the wallet');
    if (name === 'import') command.argument('<FILE>', 'the BIP329 file (JSON Lines)');
    else command.option('--out <FILE>', 'write to FILE instead of printing');
    command.option('--user <NAME>', 'act as this user', 'admin');
    addSettingOptions(command, COMMAND_SETTINGS.network).action(async (...args: unknown[]) => {
      const options = new Map<string, string>();
      for (const [long, value] of commandOptions(command)) if (typeof value === 'string') options.set(long, value);
      const words = args.filter((a): a is string => typeof a === 'string');
      const [{ runLabelCommand }, { requireExistingStore }] = await Promise.all([import('./label-commands.js'), import('./store-check.js')]);
      out(await runLabelCommand(configOf(command), name, words[0]!, words[1], options, requireExistingStore));
    });
  }
}

/** The command's own options as given (by long flag), without the setting options. */
function commandOptions(command: Command): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  for (const option of command.options) {
    if (option.long === undefined || isSettingFlag(option.long)) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    if (value !== undefined) found.push([option.long, value]);
  }
  return found;
}

/** Collects a repeatable option's values (`--to` may be given many times). */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

const PSBT_VALUE_OPTIONS: Record<PsbtAction, ReadonlyArray<[string, string]>> = {
  list: [],
  create: [
    ['--to <ADDRESS=AMOUNT>', 'a recipient; the amount in BTC, or with a btc or sat suffix; repeat for more'],
    ['--fee-rate <SAT_PER_VB>', 'fee rate (default: the node estimate)'],
    ['--subtract-from <INDEX>', 'take the fee from this recipient'],
    ['--rbf-tx-id <TXID>', 'replace this pending transaction'],
    ['--label <TEXT>', 'label of the recipients'],
  ],
  show: [
    ['--out <FILE>', 'write to FILE instead of printing'],
    ['--psbt-version <0|2>', 'PSBT version of the base64 or binary output: 0 (BIP174, default) or 2 (BIP370)'],
  ],
  'sign-import': [],
  broadcast: [],
};

const PSBT_ARGUMENTS: Record<PsbtAction, readonly string[]> = {
  list: ['WALLET'],
  create: ['WALLET'],
  show: ['WALLET', 'TXID'],
  'sign-import': ['WALLET', 'TXID', 'FILE'],
  broadcast: ['WALLET', 'TXID'],
};

function psbtCommands(program: Command): void {
  const psbt = group(program, 'psbt');
  for (const name of ['list', 'create', 'show', 'sign-import', 'broadcast'] as const) {
    const command = subcommand(psbt, name, `psbt ${name}`);
    for (const argument of PSBT_ARGUMENTS[name]) command.argument(`<${argument}>`);
    const valueOptions = [...PSBT_VALUE_OPTIONS[name], ['--user <NAME>', 'act as this user (default: admin)'] as [string, string]];
    // Collected, so that psbt-commands can refuse a repeated option other than --to.
    for (const [flags, description] of valueOptions) command.option(flags, description, collect);
    if (name === 'show') command.addOption(new Option('--format <FORMAT>', 'json, base64 or binary (binary to --out or to a pipe or file, not to a terminal)').choices(['json', 'base64', 'binary']));
    if (name === 'create') command.option('--no-rbf', 'do not signal replace-by-fee');
    const uses = name === 'list' || name === 'show' ? COMMAND_SETTINGS.network : [...COMMAND_SETTINGS.node, 'max_fee_rate', 'max_pending_psbts'];
    addSettingOptions(command, uses).action(async (...args: unknown[]) => {
      const values = new Map<string, string[]>();
      for (const [long, value] of commandOptions(command)) {
        if (typeof value === 'string') values.set(long, [value]);
        else if (Array.isArray(value)) values.set(long, value as string[]);
      }
      const switches = new Set<string>(command.getOptionValue('rbf') === false ? ['--no-rbf'] : []);
      const words = args.slice(0, PSBT_ARGUMENTS[name].length) as string[];
      const { runPsbtCommand } = await import('./psbt-commands.js');
      const result = await runPsbtCommand(name, words, { values, switches }, settingFlags(command), process.env);
      if (typeof result === 'string') out(result);
      // A closed pipe is not the command's failure: main.ts ends the process quietly then.
      else await new Promise<void>((resolve, reject) => process.stdout.write(result.bytes, (error) => (error && (error as NodeJS.ErrnoException).code !== 'EPIPE' ? reject(error) : resolve())));
    });
  }
}

function configCommands(program: Command): void {
  const command = subcommand(group(program, 'config'), 'show', 'config show');
  addSettingOptions(command, COMMAND_SETTINGS.all).action(() => {
    const config = configOf(command);
    out(`data folder ${config.dataFolder} (config file ${join(config.dataFolder, CONFIG_FILE_NAME)})`);
    for (const { key, value, origin } of settingOrigins({ flags: settingFlags(command), env: process.env }, config.dataFolder)) out(`${key}=${value}\t(${origin})`);
  });
}

function backupCommands(program: Command): void {
  for (const name of ['backup', 'restore'] as const) {
    const command = subcommand(program, name, name)
      .argument('<FILE>', name === 'backup' ? 'the snapshot to write' : 'the snapshot to restore')
      .option('--force', name === 'backup' ? 'replace FILE' : 'replace a store that holds data');
    addSettingOptions(command, COMMAND_SETTINGS.store).action(async (file: string, options: { force?: boolean }) => {
      const { runBackupCommand } = await import('./backup-commands.js');
      out(await runBackupCommand(name, configOf(command), file, options.force === true));
    });
  }
}

/** `wcs help [command [subcommand]]`: the usage of the program or of one command. */
function helpCommand(program: Command): void {
  subcommand(program, 'help', 'help')
    .argument('[COMMAND]')
    .argument('[SUBCOMMAND]')
    .action((command: string | undefined, sub: string | undefined) => {
      let target = program;
      for (const word of [command, sub]) {
        if (word === undefined) break;
        const found = target.commands.find((c) => c.name() === word);
        // A word past a command without subcommands is an argument: the command's help applies.
        if (!found) {
          if (target.commands.length === 0) break;
          target.error(`unknown command '${word}'`, { code: 'commander.unknownCommand', exitCode: USAGE_EXIT_CODE });
        }
        target = found!;
      }
      target.outputHelp();
    });
}

export function buildProgram(): Command {
  const program = new Command('wcs')
    .usage('<command> [options]')
    .description('Wallet coordination service: watches the chain, builds PSBTs, collects signatures, broadcasts.')
    .version(readVersion(), '--version', 'show the version')
    .helpCommand(false)
    // Set before the subcommands are made: commander copies these settings to them.
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`wcs: ${printable(text.replace(/^error: /, ''))}`) })
    .showHelpAfterError(USAGE_HINT)
    .configureHelp({ subcommandTerm: (command) => `${command.name()} ${command.usage()}`.trim() })
    .addHelpText('after', OVERVIEW);

  const serveCommand = subcommand(program, 'serve', 'serve').option(
    '--replace-jwt-key',
    'accept a JWT signing key other than the one the database knows (every token issued so far stops working); without it such a start is refused',
  );
  addSettingOptions(serveCommand, COMMAND_SETTINGS.all).action(async (options: { replaceJwtKey?: boolean }) => {
    const config = configOf(serveCommand);
    const { serve } = await import('./serve-command.js');
    await serve(config, options.replaceJwtKey === true, givenSettings({ flags: settingFlags(serveCommand), env: process.env }));
  });
  userCommands(program);
  backupCommands(program);
  walletCommands(program);
  labelCommands(program);
  psbtCommands(program);
  configCommands(program);
  helpCommand(program);
  subcommand(program, 'version', 'version').action(() => out(readVersion()));
  return program;
}
