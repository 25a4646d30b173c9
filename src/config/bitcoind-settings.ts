/**
 * The settings of Bitcoin Core as the chain source (`bitcoind_url`, its credentials and its `blocks` folder),
 * and the checks that they fit together. Part of SETTINGS (settings.ts), like chain-settings.ts.
 */
import { readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { urlHasCredentials } from './config-error.js';
import type { Draft, Setting } from './config-types.js';
import { existingFolder, expandHome, optionalText } from './setting-values.js';

export const BITCOIND_SETTINGS: readonly Setting[] = [
  { key: 'bitcoind_url', env: 'SERVICE_BITCOIND_URL', flag: '--bitcoind-url', defaultText: 'none', description: 'JSON-RPC address of Bitcoin Core, e.g. `http://127.0.0.1:8332`. Give this or `electrum_url`, not both.',
    apply: (d, t) => {
      const url = optionalText(t);
      if (url !== undefined && !/^https?:\/\/[^\s]+$/i.test(url)) throw new Error('must be an http:// or https:// address');
      d.bitcoind.url = url;
    } },
  { key: 'bitcoind_cookie', env: 'SERVICE_BITCOIND_COOKIE', flag: '--bitcoind-cookie', defaultText: 'none', description: 'Path of Bitcoin Core\'s `.cookie` file (cookie authentication).',
    apply: (d, t) => { d.bitcoind.cookieFile = optionalText(t); } },
  { key: 'bitcoind_user', env: 'SERVICE_BITCOIND_USER', flag: '--bitcoind-user', defaultText: 'none', description: 'JSON-RPC user name (instead of the cookie).',
    apply: (d, t) => { d.bitcoind.user = optionalText(t); } },
  { key: 'bitcoind_password', env: 'SERVICE_BITCOIND_PASSWORD', flag: '--bitcoind-password', defaultText: 'none', description: 'JSON-RPC password.', secret: true,
    apply: (d, t) => { d.bitcoind.password = t === '' ? undefined : t; } },
  { key: 'bitcoind_blocks_folder', env: 'SERVICE_BITCOIND_BLOCKS_FOLDER', flag: '--bitcoind-blocks-folder', defaultText: 'the `blocks` folder beside `bitcoind_cookie`, if there is one with block files', description: 'Bitcoin Core\'s `blocks` folder (e.g. `~/.bitcoin/blocks`), when the service may read it: while the node keeps no block filters (`-blockfilterindex`), scans read blocks from its files instead of over JSON-RPC. `none`: never read the node\'s files.',
    apply: (d, t) => {
      d.blocksFolderOff = t.trim().toLowerCase() === 'none';
      d.bitcoind.blocksFolder = d.blocksFolderOff ? undefined : existingFolder(t);
    } },
];

/**
 * One line naming the setting (and where it came from, `originOf` its key) when the node's address and
 * credentials do not fit together; undefined when they do.
 */
export function bitcoindSettingsConflict(draft: Pick<Draft, 'bitcoind'>, originOf: (key: string) => string): string | undefined {
  const { bitcoind } = draft;
  if ((bitcoind.user === undefined) !== (bitcoind.password === undefined)) {
    return 'Invalid setting SERVICE_BITCOIND_USER / SERVICE_BITCOIND_PASSWORD: give both or neither';
  }
  if (bitcoind.url !== undefined && bitcoind.cookieFile === undefined && bitcoind.user === undefined && !urlHasCredentials(bitcoind.url)) {
    return `Invalid setting SERVICE_BITCOIND_URL (from ${originOf('bitcoind_url')}): give its credentials too, SERVICE_BITCOIND_COOKIE (bitcoind_cookie) or SERVICE_BITCOIND_USER and SERVICE_BITCOIND_PASSWORD (bitcoind_user, bitcoind_password)`;
  }
  return undefined;
}

/**
 * The node writes its cookie into the data folder of its network, beside its `blocks` folder (unless started
 * with `-blocksdir`): that folder, if it can be read and holds block files; undefined otherwise.
 */
function blocksFolderBeside(cookieFile: string): string | undefined {
  const folder = resolve(dirname(expandHome(cookieFile)), 'blocks');
  try {
    return readdirSync(folder).some((name) => /^blk\d{5,}\.dat$/.test(name)) ? folder : undefined;
  } catch {
    return undefined;
  }
}

/** The node's `blocks` folder: as given, or found beside the cookie unless `none` was given or a user name replaces the cookie. */
export function bitcoindBlocksFolder(draft: Pick<Draft, 'bitcoind' | 'blocksFolderOff'>): string | undefined {
  const { bitcoind } = draft;
  if (draft.blocksFolderOff || bitcoind.blocksFolder !== undefined || bitcoind.user !== undefined || bitcoind.cookieFile === undefined) return bitcoind.blocksFolder;
  return blocksFolderBeside(bitcoind.cookieFile);
}
