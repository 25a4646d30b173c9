/**
 * vitest globalSetup: says plainly whether the tests against a real Fulcrum (an Electrum server) run. Without a
 * usable Fulcrum the run fails when CI is set or FULCRUM names something unusable (missing libraries included);
 * otherwise those tests are skipped and the notice, repeated at the end, tells how to run them.
 */
import { realNodeRequired } from './bitcoind-locate.js';
import { HOW_TO_RUN_FULCRUM, locateFulcrum } from './fulcrum-locate.js';

export default function setup(): () => void {
  const located = locateFulcrum();
  if (located.ok) {
    process.stdout.write(`Electrum tests: running against ${located.path} (Fulcrum ${located.version}).\n\n`);
    return () => {};
  }
  if (realNodeRequired() || located.explicit) {
    throw new Error(`The Electrum tests cannot run: ${located.reason}. ${realNodeRequired() ? 'CI is set, so this fails the run. ' : ''}Run them with ${HOW_TO_RUN_FULCRUM}`);
  }
  const notice = ['', `!!! The Electrum tests did NOT run: ${located.reason}.`, `!!! Run them with: ${HOW_TO_RUN_FULCRUM}`, ''].join('\n');
  process.stdout.write(notice + '\n');
  return () => {
    process.stdout.write(notice + '\n');
  };
}
