/** Usage texts: the global one and one per command and subcommand (`wcs <command> [sub] --help`). */
import { DATA_FOLDER_SETTING, SETTINGS } from '../config.js';

const OPTIONS = `Options (each also as a SERVICE_* environment variable or in <data_folder>/config.json):
${[DATA_FOLDER_SETTING, ...SETTINGS].map((s) => `  ${s.flag.padEnd(28)} ${s.env}`).join('\n')}`;

const STORE_NOTE = `Only "serve" (and "restore", from a snapshot) creates a store; every other command works on an
existing one and refuses a data folder without a store.`;

/** Per command: one line for the overview, and the full usage. Keys: "user", "user add", ... */
const COMMANDS: ReadonlyArray<{ key: string; synopsis: string; summary: string; details?: string }> = [
  {
    key: 'serve',
    synopsis: 'serve [--replace-jwt-key]',
    summary: 'Run the service (HTTP API, probes, docs); creates the store and the first admin on first start.',
    details: `  --replace-jwt-key           Accept a JWT signing key other than the one the database knows (every token
                              issued so far stops working); without it such a start is refused.`,
  },
  { key: 'user add', synopsis: 'user add NAME [--admin]', summary: 'Add a user; the password is read from a prompt or the first line of stdin.' },
  { key: 'user passwd', synopsis: 'user passwd NAME', summary: "Set a user's password (revokes all of their tokens)." },
  { key: 'user list', synopsis: 'user list', summary: 'List users.' },
  {
    key: 'user delete',
    synopsis: 'user delete NAME [--transfer-wallets-to USER | --delete-wallets]',
    summary: 'Delete a user with their tokens and shares; refused while they own wallets unless one option says what happens to them.',
    details: `  --transfer-wallets-to USER  USER becomes the owner of NAME's wallets (shares kept; a share USER had
                              on one of them is dropped, USER owns it now).
  --delete-wallets            Delete NAME's wallets with their PSBTs and collected signatures.`,
  },
  { key: 'backup', synopsis: 'backup FILE [--force]', summary: 'Write a consistent snapshot of the SQLite store to FILE (safe while serving; --force replaces FILE).' },
  { key: 'restore', synopsis: 'restore FILE [--force]', summary: 'Replace the SQLite store with the snapshot FILE (service stopped; --force replaces a store that holds data).' },
  {
    key: 'wallet import',
    synopsis: 'wallet import --name NAME (--descriptor D | --recv-descriptor D --change-descriptor D) [--alias A] [--description T] [--birthday HEIGHT|YYYY-MM-DD] [--gap-limit N] [--user NAME]',
    summary: 'Import a watch-only wallet, owned by --user (default admin).',
  },
  { key: 'wallet list', synopsis: 'wallet list [--user NAME]', summary: 'List the wallets --user (default admin) can access.' },
  { key: 'wallet show', synopsis: 'wallet show ALIAS [--user NAME]', summary: "Show a wallet's details (JSON)." },
  { key: 'wallet delete', synopsis: 'wallet delete ALIAS [--user NAME]', summary: 'Delete a wallet with its PSBTs (owner only).' },
  { key: 'wallet rescan', synopsis: 'wallet rescan ALIAS [--from HEIGHT] [--user NAME]', summary: "Forget the wallet's chain data and scan again; a progress bar on a terminal, plain lines otherwise." },
  { key: 'psbt list', synopsis: 'psbt list WALLET [--user NAME]', summary: "List the wallet's pending PSBTs (txid, recipients, fee rate, signatures)." },
  {
    key: 'psbt create',
    synopsis: 'psbt create WALLET --to ADDRESS=AMOUNT[btc|sat] [--to ...] [--fee-rate SAT_PER_VB] [--subtract-from INDEX] [--no-rbf] [--rbf-tx-id TXID] [--label TEXT] [--user NAME]',
    summary: 'Create a PSBT; prints its txid, fee and base64.',
  },
  { key: 'psbt show', synopsis: 'psbt show WALLET TXID [--format json|base64|binary] [--out FILE] [--user NAME]', summary: 'Print one PSBT (binary needs --out: the file signers import).' },
  { key: 'psbt sign-import', synopsis: 'psbt sign-import WALLET TXID FILE [--user NAME]', summary: "Merge a cosigner's signed copy (binary or base64 file)." },
  { key: 'psbt broadcast', synopsis: 'psbt broadcast WALLET TXID [--user NAME]', summary: 'Finalize, verify every signature and broadcast; prints the txid.' },
  { key: 'help', synopsis: 'help [COMMAND [SUBCOMMAND]]', summary: 'Show this text, or the usage of one command.' },
  { key: 'version', synopsis: 'version', summary: 'Show the version.' },
];

const GROUP_NOTES: Record<string, string> = {
  user: 'Users of the service. The password of add and passwd is read from a prompt without echo, or from the first line of stdin.',
  wallet: 'Watch-only wallets, acting as --user (default admin) on the configured store and Bitcoin Core.',
  psbt: 'PSBTs of a wallet, acting as --user (default admin), who needs read access (list, show) or spend access (the others).',
};

function entry(command: (typeof COMMANDS)[number]): string {
  const line = `  ${command.synopsis}\n      ${command.summary}`;
  return command.details ? `${line}\n${command.details}` : line;
}

export const GLOBAL_USAGE = `Usage: wcs <command> [options]   (from the project folder: npx wcs <command> [options])

Commands:
${COMMANDS.map(entry).join('\n')}

"wcs <command> --help" shows the usage of one command.
${STORE_NOTE}

${OPTIONS}
`;

/** The usage of `words` (e.g. ["user"], ["user", "delete"]); undefined when no such command. */
export function commandUsage(words: readonly string[]): string | undefined {
  const [command, sub] = words;
  if (command === undefined) return GLOBAL_USAGE;
  const exact = COMMANDS.find((c) => c.key === `${command} ${sub ?? ''}`.trim() || (sub !== undefined && c.key === command));
  if (exact) return `Usage: wcs ${entry(exact).trimStart()}\n\n${OPTIONS}\n`;
  const group = COMMANDS.filter((c) => c.key.startsWith(`${command} `));
  if (group.length === 0) return undefined;
  return `Usage: wcs ${command} <subcommand> [options]\n\n${GROUP_NOTES[command] ?? ''}\n\nSubcommands:\n${group.map(entry).join('\n')}\n\n"wcs ${command} <subcommand> --help" shows the usage of one subcommand.\n\n${OPTIONS}\n`;
}

/** The words before the first option: what `--help` is about. */
export function helpTopic(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    if (arg === 'help') continue;
    words.push(arg);
    if (words.length === 2) break;
  }
  return words;
}
