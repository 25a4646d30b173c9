/** Loads the vendored Bitcoin Core regtest fixtures (see test/fixtures/PROVENANCE.md). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../fixtures/regtest/', import.meta.url));

export function loadFixture<T = any>(name: 'blocks' | 'keys' | 'psbts' | 'rpc' | 'timeline' | 'wallets'): T {
  return JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')) as T;
}
