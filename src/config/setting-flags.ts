/**
 * Settings given on the command line, as `--name value` or `--name=value`: the first of the sources
 * (flags, then environment variables, then config.json).
 */
import { ConfigError } from './config-error.js';
import { DATA_FOLDER_SETTING, SETTINGS } from './settings.js';

/** Each setting flag's text, the last one given winning; an unknown flag or one without its value is refused. */
export function parseFlags(flags: readonly string[]): Map<string, string> {
  const known = new Set<string>([DATA_FOLDER_SETTING.flag, ...SETTINGS.map((s) => s.flag)]);
  const values = new Map<string, string>();
  for (let i = 0; i < flags.length; i++) {
    const arg = flags[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!known.has(name)) throw new ConfigError(`Unknown option ${name}`);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (name === '--api-active' && (flags[i + 1] === undefined || flags[i + 1]?.startsWith('--'))) value = 'true';
    else value = flags[++i];
    if (value === undefined) throw new ConfigError(`Option ${name} needs a value`);
    values.set(name, value);
  }
  return values;
}
