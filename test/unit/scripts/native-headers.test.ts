/**
 * The headers the SQLite driver is built against (scripts/native-headers.mjs): the ones matching the Node.js
 * that loads it, whatever nodedir npm is configured with (a machine's nodedir may hold another version's).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

interface NativeHeaders {
  headersAbi(nodedir: string): string | undefined;
  matchingNodedir(options: { configured: string | undefined; execPath: string; abi: string }): string | undefined;
}
const script = pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'scripts', 'native-headers.mjs')).href;
const { headersAbi, matchingNodedir } = (await import(script)) as NativeHeaders;

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-native-headers-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A Node.js install (bin/node, include/node) with headers of ABI `abi`, or none; returns its prefix. */
function install(name: string, abi?: string): string {
  const prefix = join(folder, name);
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  writeFileSync(join(prefix, 'bin', 'node'), '');
  if (abi !== undefined) {
    mkdirSync(join(prefix, 'include', 'node'), { recursive: true });
    writeFileSync(join(prefix, 'include', 'node', 'node_version.h'), `#define NODE_MAJOR_VERSION 1\n#define NODE_MODULE_VERSION ${abi}\n`);
  }
  return prefix;
}

describe('headers for native modules', () => {
  it("reads a nodedir's ABI from its node_version.h, none where there are no headers", () => {
    expect(headersAbi(install('with', '127'))).toBe('127');
    expect(headersAbi(install('without'))).toBeUndefined();
  });

  it('keeps the configured nodedir when its headers are of the running ABI', () => {
    const configured = install('configured', '127');
    expect(matchingNodedir({ configured, execPath: join(install('running', '127'), 'bin', 'node'), abi: '127' })).toBe(configured);
  });

  it("takes the headers beside the running Node.js when the configured ones are another version's", () => {
    const running = install('node-22', '127');
    for (const configured of [install('node-20', '115'), install('no-headers'), undefined]) {
      expect(matchingNodedir({ configured, execPath: join(running, 'bin', 'node'), abi: '127' })).toBe(running);
    }
  });

  it("leaves the choice to node-gyp when no headers match (its cache or a download)", () => {
    expect(matchingNodedir({ configured: install('node-20', '115'), execPath: join(install('node-24', '137'), 'bin', 'node'), abi: '127' })).toBeUndefined();
    expect(matchingNodedir({ configured: undefined, execPath: join(install('bare'), 'bin', 'node'), abi: '127' })).toBeUndefined();
  });
});
