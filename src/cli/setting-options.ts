/**
 * The setting options (`--data-folder` and every entry of SETTINGS) of the commands that load the
 * configuration. Commander only collects them; loadConfig validates them and applies the precedence.
 */
import { Option, type Command } from 'commander';
import { DATA_FOLDER_SETTING, SETTINGS } from '../config.js';

const ALL_SETTINGS = [DATA_FOLDER_SETTING, ...SETTINGS];

const GROUP = 'Settings (each also as its environment variable or in <data_folder>/config.json):';

function settingOption(setting: (typeof ALL_SETTINGS)[number]): Option {
  // --api-active may stand alone (meaning true); every other setting takes a value.
  const value = setting.flag === '--api-active' ? '[BOOL]' : '<VALUE>';
  // The environment variable is only named here: loadConfig reads it, so that flags win over it there.
  const description = `${setting.description.replaceAll('`', '')} (env: ${setting.env}; default: ${setting.defaultText.replaceAll('`', '')})`;
  return new Option(`${setting.flag} ${value}`, description).helpGroup(GROUP);
}

export function isSettingFlag(flag: string): boolean {
  return ALL_SETTINGS.some((s) => s.flag === flag);
}

export function addSettingOptions(command: Command): Command {
  for (const setting of ALL_SETTINGS) command.addOption(settingOption(setting));
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
