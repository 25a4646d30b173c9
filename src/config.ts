/**
 * The service's one typed configuration, built from command-line flags, `SERVICE_*` environment
 * variables and an optional `config.json` in the data folder (in that order of precedence), over
 * defaults. Every setting is declared once in SETTINGS; a bad value stops the start with one line
 * naming the setting. The parts live in config/:
 *   config-types.ts        the shape of Config, of the draft it is built in, and of one setting
 *   settings.ts            the settings table (SETTINGS) and the defaults, with its groups
 *                          bitcoind-settings.ts, chain-settings.ts (Electrum) and cost-limit-settings.ts
 *   setting-values.ts      parsing and checking of one setting's text
 *   setting-flags.ts, setting-variables.ts, config-file.ts
 *                          the sources: flags, `SERVICE_*` variables, the data folder's config.json
 *   load-config.ts         the merge of the sources into one Config
 *   config-error.ts        ConfigError, and credentials kept out of its messages
 */
export { ConfigError, redactCredentials, urlHasCredentials } from './config/config-error.js';
export { LOG_LEVELS, type Config, type ConfigSources, type DatabaseConfig, type Draft, type GivenSetting, type LogLevel, type Setting } from './config/config-types.js';
export { DEFAULT_COST_LIMITS, type CostLimits } from './config/cost-limit-settings.js';
export { DATA_FOLDER_SETTING, SETTINGS } from './config/settings.js';
export { CONFIG_FILE_NAME, configFileObject, exposedConfigFile } from './config/config-file.js';
export { unknownSettingVariables } from './config/setting-variables.js';
export { givenSettings, loadConfig, settingOrigins } from './config/load-config.js';
