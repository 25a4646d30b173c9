/**
 * The command line's own errors, in a module of their own so that the `wcs` entry point can tell them apart
 * without loading the commands (and the service behind them).
 */

/** A command-line mistake of `backup`/`restore`, `psbt` or `wallet` (exit code 2, with the usage hint). */
export class BackupUsageError extends Error {}
export class PsbtUsageError extends Error {}
export class WalletUsageError extends Error {}

/** No store where the configuration points (exit code 1). */
export class NoStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoStoreError';
  }
}
