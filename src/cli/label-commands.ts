/** `wcs labels export|import`: a wallet's BIP329 labels from the command line, acting as `--user` (default `admin`). */
import type { Config } from '../config.js';
import { createRuntime } from '../main.js';
import { ServiceError } from '../services/errors.js';
import type { Principal } from '../services/principal.js';
import { output, readInputFile } from './wallet-commands.js';

export async function runLabelCommand(
  config: Config,
  action: 'export' | 'import',
  alias: string,
  file: string | undefined,
  options: ReadonlyMap<string, string>,
  beforeOpen: (config: Config) => Promise<void> = async () => {},
): Promise<string> {
  // The file is read before the store is opened: a mistyped name costs nothing.
  const text = action === 'import' ? readInputFile('FILE', file!) : undefined;
  await beforeOpen(config);
  const runtime = await createRuntime(config, { createNoFiles: true });
  try {
    const userName = options.get('--user') ?? 'admin';
    const user = await runtime.store.users.find(userName);
    if (!user) throw new ServiceError('not_found', 'user_not_found', `No user ${userName}`);
    const principal: Principal = { userName, isAdmin: user.isAdmin };
    const labels = runtime.services.wallets.labels;
    if (action === 'export') {
      const exported = await labels.export(principal, alias);
      return output(exported.text, options.get('--out'), `the labels of wallet ${alias}`);
    }
    const result = await labels.import(principal, alias, text);
    const { unknown_reference, unsupported_type, older, owner_only } = result.skipped;
    const ownerOnly = owner_only > 0 ? `, ${owner_only} key labels only the owner may change` : '';
    return `Imported ${result.imported} labels into ${alias}; skipped ${unknown_reference} unknown references, ${unsupported_type} of unsupported types, ${older} older than the wallet's${ownerOnly}`;
  } finally {
    await runtime.close();
  }
}
