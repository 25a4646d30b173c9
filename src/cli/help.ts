/**
 * Texts of the `wcs` help: a synopsis and summary per command and subcommand, a note per command group,
 * and the overview under the global usage. Commander lays them out and adds the options.
 */
const STORE_NOTE = `Only "serve" (and "restore", from a snapshot) creates a store; every other command works on an
existing one and refuses a data folder without a store.`;

/** Per command: its synopsis and one-line summary. Keys: "serve", "user add", ... */
const COMMANDS: ReadonlyArray<{ key: string; synopsis: string; summary: string }> = [
  {
    key: 'serve',
    synopsis: 'serve [--replace-jwt-key]',
    summary: 'Run the service (HTTP API, probes, docs); creates the store and the first admin on first start.',
  },
  { key: 'user add', synopsis: 'user add NAME [--admin]', summary: 'Add a user; the password is read from a prompt or the first line of stdin.' },
  { key: 'user passwd', synopsis: 'user passwd NAME', summary: "Set a user's password (revokes all of their tokens)." },
  { key: 'user list', synopsis: 'user list', summary: 'List users.' },
  {
    key: 'user delete',
    synopsis: 'user delete NAME [--transfer-wallets-to USER | --delete-wallets]',
    summary: 'Delete a user with their tokens and shares; refused while they own wallets unless one option says what happens to them.',
  },
  { key: 'backup', synopsis: 'backup FILE [--force]', summary: 'Write a consistent snapshot of the SQLite store to FILE (safe while serving; --force replaces FILE).' },
  { key: 'restore', synopsis: 'restore FILE [--force]', summary: 'Replace the SQLite store with the snapshot FILE (service stopped; --force replaces a store that holds data).' },
  {
    key: 'wallet import',
    synopsis:
      'wallet import (--name NAME (--descriptor D | --recv-descriptor D --change-descriptor D) | --file F [--format FORMAT] [--name NAME]) [--alias A] [--description T] [--birthday HEIGHT|YYYY-MM-DD] [--gap-limit N] [--user NAME]',
    summary: 'Import a watch-only wallet, owned by --user (default admin); --file reads a descriptor, BSMS, Coldcard, Specter or Caravan file.',
  },
  {
    key: 'wallet export',
    synopsis: 'wallet export ALIAS --format descriptor|bsms|coldcard|specter|caravan [--out FILE] [--user NAME]',
    summary: 'Write the wallet setup as a file other coordinators and signers import.',
  },
  { key: 'wallet list', synopsis: 'wallet list [--user NAME]', summary: 'List the wallets --user (default admin) can access.' },
  { key: 'wallet show', synopsis: 'wallet show ALIAS [--user NAME]', summary: "Show a wallet's details (JSON)." },
  { key: 'wallet delete', synopsis: 'wallet delete ALIAS [--user NAME]', summary: 'Delete a wallet with its PSBTs (owner only).' },
  { key: 'wallet rescan', synopsis: 'wallet rescan ALIAS [--from HEIGHT] [--user NAME]', summary: "Forget the wallet's chain data and scan again; a progress bar on a terminal, plain lines otherwise." },
  { key: 'labels export', synopsis: 'labels export ALIAS [--out FILE] [--user NAME]', summary: "Write the wallet's labels as BIP329 JSON Lines." },
  {
    key: 'labels import',
    synopsis: 'labels import ALIAS FILE [--user NAME]',
    summary: 'Import a BIP329 file (newer label wins; unknown references skipped; all or nothing).',
  },
  { key: 'psbt list', synopsis: 'psbt list WALLET [--user NAME]', summary: "List the wallet's pending PSBTs (txid, recipients, fee rate, signatures)." },
  {
    key: 'psbt create',
    synopsis: 'psbt create WALLET --to ADDRESS=AMOUNT[btc|sat] [--to ...] [--fee-rate SAT_PER_VB] [--subtract-from INDEX] [--no-rbf] [--rbf-tx-id TXID] [--label TEXT] [--user NAME]',
    summary: 'Create a PSBT; prints its txid, fee and base64.',
  },
  { key: 'psbt show', synopsis: 'psbt show WALLET TXID [--format json|base64|binary] [--psbt-version 0|2] [--out FILE] [--user NAME]', summary: 'Print one PSBT (binary, the file signers import, goes to --out FILE or to stdout sent to a pipe or file).' },
  { key: 'psbt sign-import', synopsis: 'psbt sign-import WALLET TXID FILE [--user NAME]', summary: "Merge a cosigner's signed copy (binary or base64 file)." },
  { key: 'psbt broadcast', synopsis: 'psbt broadcast WALLET TXID [--user NAME]', summary: 'Finalize, verify every signature and broadcast; prints the txid.' },
  {
    key: 'config show',
    synopsis: 'config show',
    summary: 'Show every setting the commands use here, with where it comes from (option, environment, config.json, default); secrets only as set.',
  },
  { key: 'help', synopsis: 'help [COMMAND [SUBCOMMAND]]', summary: 'Show this text, or the usage of one command.' },
  { key: 'version', synopsis: 'version', summary: 'Show the version.' },
];

const GROUP_NOTES: Record<string, string> = {
  user: 'Users of the service. The password of add and passwd is read from a prompt without echo, or from the first line of stdin.',
  wallet: 'Watch-only wallets, acting as --user (default admin) on the configured store and Bitcoin Core.',
  labels: 'BIP329 labels of a wallet, acting as --user (default admin), who needs read access (export) or spend access (import).',
  config: 'The settings in effect: given as options, SERVICE_* variables, in <data_folder>/config.json (where serve records those it was started with), or defaults.',
  psbt: 'PSBTs of a wallet, acting as --user (default admin), who needs read access (list, show) or spend access (the others).',
};

export interface CommandText {
  /** What follows the command's name on the "Usage:" line. */
  usage: string;
  summary: string;
}

/** The texts of `key` ("serve", "user add", ...); throws for a key without texts (a programming error). */
export function commandText(key: string): CommandText {
  const found = COMMANDS.find((c) => c.key === key);
  if (!found) throw new Error(`No help text for ${key}`);
  return { usage: found.synopsis.slice(key.length).trim(), summary: found.summary };
}

/** The description of a command group ("user", "wallet", "psbt"). */
export function groupNote(group: string): string {
  const note = GROUP_NOTES[group];
  if (note === undefined) throw new Error(`No help text for ${group}`);
  return note;
}

/** Under the global usage: every command with its synopsis, as one overview. */
export const OVERVIEW = `
Every command:
${COMMANDS.map((c) => `  ${c.synopsis}\n      ${c.summary}`).join('\n')}

"wcs <command> --help" (or "wcs help <command> [subcommand]") shows the usage of one command, with its options.
${STORE_NOTE}
The commands that use the store take every setting as an option (--data-folder DIR, --port N, ...),
each also as a SERVICE_* environment variable or in <data_folder>/config.json: a command's --help lists the
ones it uses, "wcs serve --help" lists them all. "serve" records the settings it was started with (by option
or environment variable, secrets excepted) in <data_folder>/config.json, so later commands use them too.`;
