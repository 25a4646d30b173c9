/**
 * Settings given on the command line, as `--name value` or `--name=value`: the first of the sources
 * (flags, then environment variables, then config.json).
 */
import { ConfigError } from './config-error.js';
import { DATA_FOLDER_SETTING, SETTINGS } from './settings.js';

/** The flags of the True/False settings: given alone (`--web-active --port 1`), they mean True. */
const TRUE_OR_FALSE_FLAGS: ReadonlySet<string> = new Set(SETTINGS.filter((s) => s.kind === 'true-or-false').map((s) => s.flag));

/**
 * Each setting flag's text, the last one given winning; an unknown flag, or one without its value, is refused.
 * A word starting with `--` is the next flag, not a value (`--host --port 1` lacks the host): such a value is
 * given as `--name=--value`.
 */
export function parseFlags(flags: readonly string[]): Map<string, string> {
  const known = new Set<string>([DATA_FOLDER_SETTING.flag, ...SETTINGS.map((s) => s.flag)]);
  const values = new Map<string, string>();
  for (let i = 0; i < flags.length; i++) {
    const arg = flags[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!known.has(name)) throw new ConfigError(`Unknown option ${name}`);
    const next = flags[i + 1];
    const nextIsValue = next !== undefined && !next.startsWith('--');
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (nextIsValue) value = flags[++i];
    else if (TRUE_OR_FALSE_FLAGS.has(name)) value = 'true';
    if (value === undefined) throw new ConfigError(`Option ${name} needs a value`);
    values.set(name, value);
  }
  return values;
}
