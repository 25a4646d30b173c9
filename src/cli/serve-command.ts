/** `wcs serve`: runs the service until SIGTERM or SIGINT, then closes it within a bounded time. */
import type { Config, GivenSetting } from '../config.js';
import { startService, type RunningService } from '../main.js';
import { flushLogger } from '../api/logging.js';
import { recordGivenSettings, recordedLine } from './remembered-settings.js';

const SHUTDOWN_GRACE_MS = 15_000;

export async function serve(config: Config, replaceSigningKey: boolean, given: readonly GivenSetting[]): Promise<void> {
  const running: RunningService = await startService(config, { replaceSigningKey });
  process.stderr.write(`${startLine(config, running.url)}\n`);
  // Only once the start succeeded: a setting that stopped it is not kept for the next command.
  try {
    const recorded = recordedLine(recordGivenSettings(config.dataFolder, given));
    if (recorded !== undefined) process.stderr.write(`${recorded}\n`);
  } catch (error) {
    // The service runs on; only later commands miss the settings, and the operator is told why.
    process.stderr.write(`wcs: could not record the settings given to serve in the data folder's config.json (${(error as NodeJS.ErrnoException).code ?? 'error'}); give them to later commands too\n`);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.logger.info({ signal }, 'shutting down');
    // In-flight requests get a bounded time; a client that never reads must not block the exit.
    setTimeout(() => {
      running.logger.error({ graceMs: SHUTDOWN_GRACE_MS }, 'shutdown took too long; exiting');
      void flushLogger(running.logger).finally(() => process.exit(1));
    }, SHUTDOWN_GRACE_MS).unref();
    running.close().then(
      () => flushLogger(running.logger).finally(() => process.exit(0)),
      (error: unknown) => {
        running.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** The one plain line at start: where the service listens, and whether the REST API and docs are on. */
export function startLine(config: Config, url: string): string {
  const api = config.apiActive
    ? `REST API on at ${url}/api/v1alpha, docs at ${url}/docs/api`
    : 'REST API and docs off (every /api path answers 404); turn them on with SERVICE_API_ACTIVE=True or --api-active';
  return `wcs: listening on ${url} (data folder ${config.dataFolder}); ${api}`;
}
