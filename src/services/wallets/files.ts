/**
 * Wallet setup files of other tools: reading one given at wallet creation (`import`), and writing a
 * wallet as a file of any supported format (read access: the file holds only public keys).
 */
import { CoreError } from '../../core/errors.js';
import { NETWORKS, type NetworkName } from '../../core/network.js';
import { isWalletFileFormat, readWalletFile, writeWalletFile, WALLET_FILE_FORMATS, type WalletFile, type WalletFileFormat, type WalletSetup } from '../../core/wallet-files/index.js';
import { ServiceError, invalidField } from '../errors.js';
import type { Principal } from '../principal.js';
import type { WalletAccess } from './access.js';
import type { StoredWallet } from '../../store/repositories.js';
import { isMiniscriptText } from '../miniscript-wallet.js';
import { bip388Policy, multipathDescriptor } from './policy-export.js';

/** Faults of a file that is well formed but describes a wallet the service must refuse: 422. */
const UNPROCESSABLE = new Set(['wrong_network', 'address_mismatch', 'invalid_threshold', 'repeated_key', 'export_unsupported']);

function fileProblem(error: CoreError, path: string): ServiceError {
  const kind = UNPROCESSABLE.has(error.code) ? 'unprocessable' : 'invalid_input';
  const code = kind === 'invalid_input' && !error.code.includes('wallet_file') ? 'invalid_wallet_file' : error.code;
  return new ServiceError(kind, code, `${path.slice(1)}: ${error.message}`, { errors: [{ path, message: error.message }] });
}

/** The wallet a creation request's `import` (and optional `import_format`) describes. */
export function readImport(input: { import?: unknown; import_format?: unknown }, network: NetworkName): WalletSetup {
  if (typeof input.import !== 'string' || input.import.trim() === '') throw invalidField('/import', 'must be the text of a wallet setup file');
  const format = input.import_format;
  if (format !== undefined && format !== null && !isWalletFileFormat(format)) {
    throw invalidField('/import_format', `must be one of ${WALLET_FILE_FORMATS.join(', ')}`);
  }
  try {
    return readWalletFile(input.import, NETWORKS[network], format ?? undefined);
  } catch (error) {
    if (error instanceof CoreError) throw fileProblem(error, '/import');
    throw error;
  }
}

/**
 * The name of a wallet whose file names none (a descriptor or BSMS file carries no name): its alias when one is
 * given, else its kind ("2-of-3 wsh-sortedmulti", "single-key wpkh"), with " (2)", " (3)"... when the owner
 * already has a wallet of that name.
 */
export function nameOfUnnamedFile(setup: WalletSetup, alias: unknown, takenNames: readonly string[]): string {
  if (typeof alias === 'string' && alias.trim() !== '') return alias.trim();
  const { info, receive } = setup.descriptors;
  // The descriptor's outer functions up to its keys: wsh(sortedmulti(... -> wsh-sortedmulti.
  const functions = /^(?:[a-z_]+\()+/i.exec(receive)?.[0].split('(').filter((f) => f !== '') ?? [];
  const script = functions.join('-') || info.addressType;
  const kind = info.sigsTotal > 1 ? `${info.sigsRequired}-of-${info.sigsTotal} ${script}` : `single-key ${script}`;
  const taken = new Set(takenNames);
  if (!taken.has(kind)) return kind;
  for (let n = 2; ; n++) if (!taken.has(`${kind} (${n})`)) return `${kind} (${n})`;
}

export interface ExportedWalletFile extends WalletFile {
  fileName: string;
}

export class WalletFiles {
  constructor(private readonly deps: { access: WalletAccess }) {}

  async export(principal: Principal, alias: string, format: unknown): Promise<ExportedWalletFile> {
    if (!isWalletFileFormat(format) && format !== 'bip388') throw invalidField('/format', `must be one of ${[...WALLET_FILE_FORMATS, 'bip388'].join(', ')}`);
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    let file: WalletFile;
    try {
      file = format === 'bip388' || (format === 'descriptor' && isMiniscriptText(wallet.receiveDescriptor)) ? policyFile(wallet, format) : this.toolFile(wallet, format);
    } catch (error) {
      if (error instanceof CoreError) throw fileProblem(error, '/format');
      throw error;
    }
    return { ...file, fileName: `${wallet.alias}-${format}.${file.extension}` };
  }

  /** A file of another tool's format: 422 for a miniscript wallet, which those formats cannot describe. */
  private toolFile(wallet: StoredWallet, format: WalletFileFormat): WalletFile {
    if (isMiniscriptText(wallet.receiveDescriptor)) throw new CoreError('export_unsupported', `A ${format} file cannot describe a miniscript wallet; export it as descriptor or bip388`);
    {
      return writeWalletFile(format, {
        name: wallet.name,
        network: NETWORKS[wallet.network],
        receiveDescriptor: wallet.receiveDescriptor,
        changeDescriptor: wallet.changeDescriptor,
        keyLabels: wallet.keys.map((k) => k.label),
        birthday: wallet.birthday,
      });
    }
  }
}

/** The multipath descriptor or the BIP388 policy of any wallet. */
function policyFile(wallet: StoredWallet, format: 'descriptor' | 'bip388'): WalletFile {
  if (format === 'descriptor') return { text: `${multipathDescriptor(wallet.receiveDescriptor, wallet.changeDescriptor)}\n`, contentType: 'text/plain', extension: 'txt' };
  const policy = bip388Policy(wallet.name, wallet.receiveDescriptor, wallet.changeDescriptor);
  return { text: `${JSON.stringify(policy, null, 2)}\n`, contentType: 'application/json', extension: 'json' };
}
