/** The package version, read from package.json (one level above src/ and dist/). */
import { readFileSync } from 'node:fs';

export function readVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
