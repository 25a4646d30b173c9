/**
 * vitest globalSetup: says plainly, at the start and at the end of the run, whether the tests
 * against a real Bitcoin Core (test/integration/bitcoind/) run. Without a usable bitcoind the run
 * fails when CI is set or BITCOIND names something unusable; otherwise those tests are skipped
 * and the notice tells how to run them.
 */
import { HOW_TO_RUN, locateBitcoind, realNodeRequired } from './bitcoind-locate.js';

export default function setup(): () => void {
  const located = locateBitcoind();
  if (located.ok) {
    process.stdout.write(`\nReal-node tests: running against ${located.path} (Bitcoin Core ${located.version}).\n\n`);
    return () => {};
  }
  if (realNodeRequired() || located.explicit) {
    throw new Error(`The real-node tests cannot run: ${located.reason}. ${realNodeRequired() ? 'CI is set, so this fails the run. ' : ''}Run them with ${HOW_TO_RUN}`);
  }
  const notice = [
    '',
    '!!! The real-node suite (test/integration/bitcoind/) did NOT run: ' + located.reason + '.',
    '!!! Run it with: ' + HOW_TO_RUN,
    '',
  ].join('\n');
  process.stdout.write(notice + '\n');
  return () => {
    process.stdout.write(notice + '\n');
  };
}
