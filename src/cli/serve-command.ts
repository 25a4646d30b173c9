/**
 * `wcs serve`: runs the service until SIGTERM or SIGINT, then closes it within a bounded time.
 * The start, in order: the port answers (liveness 200, everything else 503 `starting`), the service's modules
 * load, the store opens and the services are built, Fastify takes over the port, the sync starts.
 */
import type { Config, GivenSetting } from '../config.js';
import { openEarlyListener } from '../api/early-listener.js';
import type { RunningService } from '../main.js';
import { nextTurn } from '../services/turns.js';
import { recordGivenSettings, recordedLine } from './remembered-settings.js';

const SHUTDOWN_GRACE_MS = 15_000;

/**
 * The service's modules in parts, each loaded with a turn of the event loop after it: evaluating a part holds the
 * one JavaScript thread (60-190 ms of CPU each on an idle machine, ten times that in time on a loaded one), and
 * the port answers its probes only between them. Together they are what `main.js` and `api/server.js` import.
 */
const SERVICE_MODULE_PARTS: ReadonlyArray<() => Promise<unknown>> = [
  () => import('../store/sqlite.js'),
  () => import('../store/postgres.js'),
  () => import('../core/keys/index.js'),
  () => import('../services/index.js'),
  () => import('../main.js'),
  () => import('fastify'),
  () => import('../api/routes/index.js'),
  () => import('../web/index.js'),
  () => import('../api/server.js'),
];

export async function serve(config: Config, replaceSigningKey: boolean, given: readonly GivenSetting[]): Promise<void> {
  // First, before the heavy modules load: an orchestrator's liveness probe must pass within a second of the spawn.
  const earlyListener = await openEarlyListener(config);
  let running: RunningService | undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Stopped while starting: nothing is served yet and the store's open or migrations roll back on their own.
    if (!running) {
      process.stderr.write(`wcs: ${signal} while starting; stopped\n`);
      void earlyListener.close().finally(() => process.exit(0));
      return;
    }
    stopRunning(running, signal);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  try {
    // Loaded here, not at the top: the store, the services and Fastify take most of the start.
    for (const load of SERVICE_MODULE_PARTS) {
      await load();
      await nextTurn();
    }
    const { startService } = await import('../main.js');
    running = await startService(config, { replaceSigningKey, earlyListener });
  } catch (error) {
    // The port closes and the error ends the process as it would have before the port opened (cli/main.ts).
    await earlyListener.close();
    throw error;
  }
  process.stderr.write(`${startLine(config, running.url)}\n`);
  // Only once the start succeeded: a setting that stopped it is not kept for the next command.
  try {
    const recorded = recordedLine(recordGivenSettings(config.dataFolder, given));
    if (recorded !== undefined) process.stderr.write(`${recorded}\n`);
  } catch (error) {
    // The service runs on; only later commands miss the settings, and the operator is told why.
    process.stderr.write(`wcs: could not record the settings given to serve in the data folder's config.json (${(error as NodeJS.ErrnoException).code ?? 'error'}); give them to later commands too\n`);
  }
}

/** Closes the running service; in-flight requests get a bounded time, a client that never reads must not block the exit. */
function stopRunning(running: RunningService, signal: string): void {
  running.logger.info({ signal }, 'shutting down');
  const exitAfterFlush = async (code: number) => {
    const { flushLogger } = await import('../api/logging.js');
    await flushLogger(running.logger).finally(() => process.exit(code));
  };
  setTimeout(() => {
    running.logger.error({ graceMs: SHUTDOWN_GRACE_MS }, 'shutdown took too long; exiting');
    void exitAfterFlush(1);
  }, SHUTDOWN_GRACE_MS).unref();
  running.close().then(
    () => exitAfterFlush(0),
    (error: unknown) => {
      running.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

/** The one plain line at start: where the service listens, and whether the REST API and docs are on. */
export function startLine(config: Config, url: string): string {
  const api = config.apiActive
    ? `REST API on at ${url}/api/v1alpha, docs at ${url}/docs/api`
    : 'REST API and docs off (every /api path answers 404); turn them on with SERVICE_API_ACTIVE=True or --api-active';
  return `wcs: listening on ${url} (data folder ${config.dataFolder}); ${api}`;
}
