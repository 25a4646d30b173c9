/** Splits the command line into command words, switches of the command, and config flags. */

export interface ParsedArgs {
  /** Positional words: `user add alice` -> ['user', 'add', 'alice']. */
  words: string[];
  /** Boolean switches the command knows (e.g. `--admin`). */
  switches: Set<string>;
  /** Everything else that starts with `--`, with its value: handed to loadConfig. */
  configFlags: string[];
}

/** `valueless` are config flags that may stand without a value. */
export function parseArgs(argv: readonly string[], knownSwitches: readonly string[], valueless: readonly string[] = ['--api-active']): ParsedArgs {
  const words: string[] = [];
  const switches = new Set<string>();
  const configFlags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (knownSwitches.includes(arg)) switches.add(arg);
    else if (arg.startsWith('--')) {
      configFlags.push(arg);
      const next = argv[i + 1];
      if (!arg.includes('=') && next !== undefined && !next.startsWith('--') && !valueless.includes(arg)) {
        configFlags.push(next);
        i++;
      }
    } else words.push(arg);
  }
  return { words, switches, configFlags };
}
