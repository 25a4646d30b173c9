// @ngraveio/bc-ur (and the `assert`/`util` packages it pulls in) expect Node's global Buffer and `process`,
// which a browser lacks. This module is imported before the library so that both exist when it first runs;
// under Node it changes nothing. The `buffer` import resolves to Node's own module in Node and to the
// `buffer` npm package when bundled for the browser.
import { Buffer } from 'buffer';

const scope = globalThis as { Buffer?: unknown; process?: { env?: Record<string, string | undefined> } };
if (scope.Buffer === undefined) scope.Buffer = Buffer;
if (scope.process === undefined) scope.process = { env: {} };
