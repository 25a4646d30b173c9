/**
 * The setting options (`--data-folder` and every entry of SETTINGS) of the commands that load the
 * configuration. Commander only collects them; loadConfig validates them and applies the precedence.
 */
import { Option, type Command } from 'commander';
import { DATA_FOLDER_SETTING, SETTINGS } from '../config.js';

const ALL_SETTINGS = [DATA_FOLDER_SETTING, ...SETTINGS];

const GROUP = 'Settings (each also as its environment variable or in <data_folder>/config.json):';

type AnySetting = (typeof ALL_SETTINGS)[number];

/** The True/False settings' flags may stand alone (meaning True); every other setting takes a value. */
const standsAlone = (setting: AnySetting): boolean => 'kind' in setting && setting.kind === 'true-or-false';

function settingOption(setting: AnySetting): Option {
  const value = standsAlone(setting) ? '[BOOL]' : '<VALUE>';
  const empty = standsAlone(setting) ? '; empty: the default' : '';
  // The environment variable is only named here: loadConfig reads it, so that flags win over it there.
  const description = `${setting.description.replaceAll('`', '')} (env: ${setting.env}; default: ${setting.defaultText.replaceAll('`', '')}${empty})`;
  return new Option(`${setting.flag} ${value}`, description).helpGroup(GROUP);
}

/**
 * The first setting flag in `args` that needs a value but is followed by none: by nothing, or by a word starting
 * with `--`, which commander would take as its value (`--host --port 1`: the host would be "--port"). Such a value
 * is given as `--name=--value`. Words after `--` are arguments, not flags.
 */
export function settingFlagWithoutValue(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return undefined;
    const setting = ALL_SETTINGS.find((s) => s.flag === args[i]);
    if (setting === undefined || standsAlone(setting)) continue;
    const next = args[i + 1];
    if (next === undefined || next.startsWith('--')) return setting.flag;
    i++;
  }
  return undefined;
}

export function isSettingFlag(flag: string): boolean {
  return ALL_SETTINGS.some((s) => s.flag === flag);
}

/** The settings that say where the store is: every command that uses one shows them. */
const STORE_SETTINGS = ['data_folder', 'database_url'];

/** The settings a command uses besides the store's; `serve` uses all of them. */
export const COMMAND_SETTINGS = {
  all: ALL_SETTINGS.map((s) => s.key),
  store: [],
  // The store's network is checked against this one before anything is read.
  network: ['network'],
  users: ['network', 'password_min_chars'],
  node: ['network', 'bitcoind_url', 'bitcoind_cookie', 'bitcoind_user', 'bitcoind_password', 'bitcoind_blocks_folder', 'electrum_url', 'electrum_tls_fingerprint', 'electrum_proxy'],
} as const;

/**
 * Adds every setting option to `command`, so that any may be given, but its help lists only the store's and
 * `uses`: the rest would bury the command's own options under settings it never reads.
 */
export function addSettingOptions(command: Command, uses: readonly string[]): Command {
  for (const setting of ALL_SETTINGS) {
    const option = settingOption(setting);
    if (!STORE_SETTINGS.includes(setting.key) && !uses.includes(setting.key)) option.hideHelp();
    command.addOption(option);
  }
  return command;
}

/** The setting options given to `command`, as flags for loadConfig (`--port=80`, `--api-active=true`). */
export function settingFlags(command: Command): string[] {
  const flags: string[] = [];
  for (const option of command.options) {
    if (option.long === undefined || !isSettingFlag(option.long)) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    if (value === undefined) continue;
    flags.push(`${option.long}=${value === true ? 'true' : String(value)}`);
  }
  return flags;
}
