import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { DATA_FOLDER_SETTING, SETTINGS, loadConfig } from '../../../src/config.js';
import { COMMAND_SETTINGS, addSettingOptions, settingFlagWithoutValue, settingFlags } from '../../../src/cli/setting-options.js';

function parsed(args: string[], uses: readonly string[] = COMMAND_SETTINGS.all): Command {
  const command = addSettingOptions(new Command('serve').exitOverride(), uses);
  command.parse(args, { from: 'user' });
  return command;
}

describe('setting options', () => {
  it('offers every setting, naming its environment variable in the help', () => {
    const help = parsed([]).helpInformation();
    for (const setting of [DATA_FOLDER_SETTING, ...SETTINGS]) {
      expect(help).toContain(setting.flag);
      expect(help.replace(/\s+/g, ' ')).toContain(`env: ${setting.env}`);
    }
  });

  it('lists in the help only the store settings and those the command uses, and still takes the others', () => {
    const help = parsed([], COMMAND_SETTINGS.network).helpInformation();
    expect(help).toContain('--data-folder');
    expect(help).toContain('--database');
    expect(help).toContain('--network');
    expect(help).not.toContain('--port');
    expect(help).not.toContain('--jwt-key');
    expect(help.length).toBeLessThan(2000);
    expect(settingFlags(parsed(['--port', '8080'], COMMAND_SETTINGS.network))).toEqual(['--port=8080']);
  });

  it('hands what was given to loadConfig as flags, and only that', () => {
    const command = parsed(['--data-folder', '/srv/wcs', '--port=8080', '--api-active', '--network', 'regtest']);
    expect(settingFlags(command)).toEqual(['--data-folder=/srv/wcs', '--port=8080', '--api-active=true', '--network=regtest']);
    const config = loadConfig({ flags: settingFlags(command), env: {} });
    expect(config).toMatchObject({ dataFolder: '/srv/wcs', port: 8080, apiActive: true, network: 'regtest' });
    expect(settingFlags(parsed([]))).toEqual([]);
  });

  it('leaves validation to loadConfig, which names the flag', () => {
    expect(() => loadConfig({ flags: settingFlags(parsed(['--port', 'eighty'])), env: {} })).toThrow(/SERVICE_PORT \(from --port\)/);
  });

  it('lets every True/False flag stand alone, meaning True, and says in the help that empty means the default', () => {
    const command = parsed(['--web-active', '--port', '1', '--webhook-allow-private', '--api-active']);
    expect(settingFlags(command)).toEqual(['--port=1', '--api-active=true', '--web-active=true', '--webhook-allow-private=true']);
    expect(settingFlags(parsed(['--web-active', 'false']))).toEqual(['--web-active=false']);
    const help = parsed([]).helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain('--web-active [BOOL]');
    expect(help).toMatch(/SERVICE_WEB_ACTIVE; default: True; empty: the default\)/);
  });

  it('finds a setting flag whose value is missing: at the end, or followed by another flag', () => {
    expect(settingFlagWithoutValue(['serve', '--host', '--port', '1'])).toBe('--host');
    expect(settingFlagWithoutValue(['user', 'list', '--database'])).toBe('--database');
    expect(settingFlagWithoutValue(['serve', '--web-active', '--port', '1', '--api-active'])).toBeUndefined();
    expect(settingFlagWithoutValue(['serve', '--host=--port', '--port', '-1'])).toBeUndefined();
    // `--` ends the flags: one just before it has no value, and the words after it are arguments.
    expect(settingFlagWithoutValue(['serve', '--admin-password', 'x', '--jwt-key', '--', '--host'])).toBe('--jwt-key');
    expect(settingFlagWithoutValue(['wallet', 'show', '--', '--host'])).toBeUndefined();
  });
});
