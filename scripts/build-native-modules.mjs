#!/usr/bin/env node
/**
 * Builds the native modules (the SQLite driver) for the Node.js that runs this script, run by npm
 * after the dependencies are installed (`postinstall`). package.json's allowScripts keeps npm from
 * building them itself: npm hands node-gyp the configured `nodedir` whatever Node.js runs, and a
 * machine whose nodedir holds another version's headers gets a module that Node.js refuses to load
 * (NODE_MODULE_VERSION mismatch). Here the headers match the running Node.js (native-headers.mjs).
 * A module that already loads is left as it is. A module built before on this machine for the same
 * package version and Node.js ABI is taken from the user's cache instead of compiling it again
 * (`$XDG_CACHE_HOME/wcs/native`, or `WCS_NATIVE_CACHE`): a fresh clone then installs without the compile.
 *
 * After changing Node.js versions: `npm run postinstall`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { matchingNodedir } from './native-headers.mjs';

const NATIVE_MODULES = ['better-sqlite3'];
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(projectRoot, 'package.json'));

function loads(name) {
  const probe = `const D = require(${JSON.stringify(name)}); new D(':memory:').close();`;
  return spawnSync(process.execPath, ['-e', probe], { cwd: projectRoot, stdio: 'ignore' }).status === 0;
}

/** npm's own node-gyp (npm names it to every script it runs). */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    process.env.npm_execpath && join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  const found = candidates.find((path) => path && existsSync(path));
  if (!found) throw new Error('node-gyp not found: run this script through npm (npm run postinstall)');
  return found;
}

function run(command, args, cwd, env) {
  return spawnSync(command, args, { cwd, env, stdio: 'inherit' }).status === 0;
}

function build(name) {
  const folder = dirname(require.resolve(`${name}/package.json`));
  const env = { ...process.env };
  const nodedir = matchingNodedir({ configured: process.env.npm_config_nodedir, execPath: process.execPath, abi: process.versions.modules });
  if (nodedir) env.npm_config_nodedir = nodedir;
  else delete env.npm_config_nodedir;
  const built = join(folder, 'build', 'Release', `${name.replaceAll('-', '_')}.node`);
  const cached = join(cacheFolder(), `${name}-${JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).version}-abi${process.versions.modules}-${process.platform}-${process.arch}.node`);
  if (existsSync(cached)) {
    mkdirSync(dirname(built), { recursive: true });
    copyFileSync(cached, built);
    if (loads(name)) return console.error(`${name}: taken from ${cached}`);
    rmSync(built, { force: true });
  }
  console.error(`${name}: building for Node.js ${process.version} (headers: ${nodedir ?? "node-gyp's own"})`);
  // A prebuilt binary first, as the package's own install script does (it needs the internet).
  const prebuild = join(projectRoot, 'node_modules', '.bin', 'prebuild-install');
  if (existsSync(prebuild) && run(prebuild, [], folder, env) && loads(name)) return;
  if (!run(process.execPath, [nodeGyp(), 'rebuild', '--release'], folder, env) || !loads(name)) {
    throw new Error(`${name} could not be built for Node.js ${process.version}`);
  }
  try {
    mkdirSync(dirname(cached), { recursive: true });
    copyFileSync(built, `${cached}.${process.pid}`);
    renameSync(`${cached}.${process.pid}`, cached); // whole, for an install running beside this one
  } catch {
    // No cache to write to: the next install compiles again.
  }
}

function cacheFolder() {
  return process.env.WCS_NATIVE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'wcs', 'native');
}

try {
  for (const name of NATIVE_MODULES) {
    if (!loads(name)) build(name);
  }
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
