/**
 * `<data_folder>/config.json`, the settings the data folder remembers: the last of the sources (flags and
 * environment variables win over it). Its keys are the settings' keys; lists may be JSON arrays of strings.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config-error.js';
import { SETTINGS, isSecretText } from './settings.js';

export const CONFIG_FILE_NAME = 'config.json';

/** The JSON object of the data folder's config.json, checked (known keys, usable values); undefined when there is no file. */
function parsedConfigFile(dataFolder: string): { path: string; object: Record<string, unknown> } | undefined {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    // The parser's message may quote part of the file, which may hold a secret: say where, not what.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new ConfigError(`Config file ${path} is not valid JSON${position === undefined ? '' : ` (at character ${position})`}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Config file ${path} must hold a JSON object`);
  }
  const object = parsed as Record<string, unknown>;
  const keys = new Set(SETTINGS.map((s) => s.key));
  for (const [key, value] of Object.entries(object)) {
    if (!keys.has(key)) throw new ConfigError(`Config file ${path}: unknown setting "${key}"`);
    if (settingText(value) === undefined) throw new ConfigError(`Config file ${path}: setting "${key}" must be a string, number or boolean`);
  }
  return { path, object };
}

/** A config.json value as setting text (a list of strings joined by commas); undefined for any other JSON. */
function settingText(value: unknown): string | undefined {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Each setting's text in the data folder's config.json (none when there is no file); a file that cannot be used is refused. */
export function readConfigFile(dataFolder: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(parsedConfigFile(dataFolder)?.object ?? {})) values.set(key, settingText(value)!);
  return values;
}

/**
 * The settings of config.json that hold a secret (a password or key, or an address with credentials in it)
 * while users other than its owner may read it (its mode lets group or others read), so the operator can be
 * told; undefined when there is nothing to say. An address without credentials is no secret.
 */
export function exposedConfigFile(dataFolder: string): { path: string; mode: string; secrets: string[] } | undefined {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o044) === 0) return undefined;
  const present = readConfigFile(dataFolder);
  const secrets = SETTINGS.filter((s) => isSecretText(s, present.get(s.key) ?? '')).map((s) => s.key);
  return secrets.length === 0 ? undefined : { path, mode: mode.toString(8), secrets };
}

/** The raw JSON object of `<dataFolder>/config.json` (empty when there is none), checked as loadConfig checks it. */
export function configFileObject(dataFolder: string): Record<string, unknown> {
  return parsedConfigFile(dataFolder)?.object ?? {};
}
