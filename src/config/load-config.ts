/**
 * Builds the one typed configuration: each setting's text is taken from the first source that gives it
 * (a flag, then its `SERVICE_*` variable, then the data folder's config.json), over the defaults; a bad
 * value stops the start with one line naming the setting and where it came from.
 */
import { join, resolve } from 'node:path';
import { bitcoindBlocksFolder, bitcoindSettingsConflict } from './bitcoind-settings.js';
import { chainSettingsConflict, chainSettingsReplaced } from './chain-settings.js';
import { ConfigError } from './config-error.js';
import { CONFIG_FILE_NAME, readConfigFile } from './config-file.js';
import type { Config, ConfigSources, DatabaseConfig, GivenSetting, Setting } from './config-types.js';
import { parseFlags } from './setting-flags.js';
import { expandHome } from './setting-values.js';
import { DATA_FOLDER_SETTING, SETTINGS, defaultDraft, isSecretText } from './settings.js';

type Env = Readonly<Record<string, string | undefined>>;

/** A setting's text from the first source that gives it, and which source that is; undefined: the default. */
function settingText(setting: Setting, flags: Map<string, string>, env: Env, file: Map<string, string>): { text: string; from: 'flag' | 'environment' | 'config.json' } | undefined {
  const fromFlag = flags.get(setting.flag);
  if (fromFlag !== undefined) return { text: fromFlag, from: 'flag' };
  const fromEnv = env[setting.env];
  if (fromEnv !== undefined) return { text: fromEnv, from: 'environment' };
  const fromFile = file.get(setting.key);
  return fromFile === undefined ? undefined : { text: fromFile, from: 'config.json' };
}

/** config.json's values without those a flag or variable replaces (the other chain source's, see chainSettingsReplaced). */
function fileWithoutReplaced(file: Map<string, string>, flags: Map<string, string>, env: Env): Map<string, string> {
  const given = SETTINGS.filter((s) => (flags.get(s.flag) ?? env[s.env] ?? '').trim() !== '').map((s) => s.key);
  for (const key of chainSettingsReplaced(given)) file.delete(key);
  return file;
}

/** The store `url` names (checked when the setting was applied: databaseAddress); none: SQLite in the data folder. */
function databaseOf(url: string | undefined, dataFolder: string): DatabaseConfig {
  if (url === undefined) return { kind: 'sqlite', path: join(dataFolder, 'service.sqlite') };
  if (/^postgres(ql)?:\/\//i.test(url)) return { kind: 'postgres', url };
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  return { kind: 'sqlite', path: resolve(dataFolder, expandHome(path)) };
}

/** The settings `sources` give by flag or environment variable (a flag wins over its variable). */
export function givenSettings(sources: ConfigSources = {}): GivenSetting[] {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const given: GivenSetting[] = [];
  for (const setting of SETTINGS) {
    const text = flags.get(setting.flag) ?? env[setting.env];
    if (text !== undefined) given.push({ key: setting.key, text, secret: setting.secret === true });
  }
  return given;
}

/** Where each setting's value comes from, for `wcs config show`: secrets are named, never shown. */
export function settingOrigins(sources: ConfigSources, dataFolder: string): Array<{ key: string; env: string; value: string; origin: 'flag' | 'environment' | 'config.json' | 'default' }> {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const file = fileWithoutReplaced(readConfigFile(dataFolder), flags, env);
  return SETTINGS.map((setting) => {
    const { text, from: origin } = settingText(setting, flags, env, file) ?? { text: setting.defaultText.replaceAll('`', ''), from: 'default' as const };
    const hidden = origin !== 'default' && isSecretText(setting, text);
    return { key: setting.key, env: setting.env, value: hidden ? '(secret, set)' : text, origin };
  });
}

/** Builds the configuration; throws ConfigError naming the first bad setting. */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const flags = parseFlags(sources.flags ?? []);
  const dataFolderText = flags.get(DATA_FOLDER_SETTING.flag) ?? env[DATA_FOLDER_SETTING.env] ?? '~/.wcs';
  if (dataFolderText.trim() === '') {
    throw new ConfigError(`Invalid setting ${DATA_FOLDER_SETTING.env} (${DATA_FOLDER_SETTING.flag}): must not be empty`);
  }
  // A relative folder is relative to where the operator typed the command: npm runs scripts (npm start)
  // in the package folder but says in INIT_CWD where it was started, so `npm start` and `npx wcs` agree.
  const dataFolder = resolve(env.INIT_CWD ?? process.cwd(), expandHome(dataFolderText.trim()));
  const file = fileWithoutReplaced(readConfigFile(dataFolder), flags, env);

  const draft = defaultDraft();
  // Where each given setting came from, as the messages name it: the flag, the variable, or the file's key.
  const origins = new Map<string, string>();
  for (const setting of SETTINGS) {
    const given = settingText(setting, flags, env, file);
    if (given === undefined) continue;
    const { text, from } = given;
    const origin = from === 'flag' ? setting.flag : from === 'environment' ? setting.env : `"${setting.key}" in ${join(dataFolder, CONFIG_FILE_NAME)}`;
    origins.set(setting.key, origin);
    try {
      setting.apply(draft, text);
    } catch (error) {
      const shown = setting.secret ? '' : `, got "${text.length > 60 ? `${text.slice(0, 60)}...` : text}"`;
      throw new ConfigError(`Invalid setting ${setting.env} (from ${origin}): ${(error as Error).message}${shown}`);
    }
  }
  const originOf = (key: string): string => origins.get(key) ?? 'the default';
  const conflict = chainSettingsConflict(draft, originOf) ?? bitcoindSettingsConflict(draft, originOf);
  if (conflict !== undefined) throw new ConfigError(conflict);
  draft.bitcoind.blocksFolder = bitcoindBlocksFolder(draft);
  const { databaseUrl, blocksFolderOff: _blocksFolderOff, ...rest } = draft;
  return { ...rest, dataFolder, database: databaseOf(databaseUrl, dataFolder) };
}
