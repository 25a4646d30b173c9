// Builds the web interface's assets into dist/web/assets: the client script bundle (esbuild) and the stylesheet.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web', 'assets');

export async function buildWebAssets() {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [join(root, 'src', 'web', 'client', 'main.ts')],
    outfile: join(out, 'app.js'),
    bundle: true,
    format: 'esm',
    target: 'es2020',
    minify: true,
    sourcemap: false,
    logLevel: 'warning',
  });
  copyFileSync(join(root, 'src', 'web', 'assets', 'style.css'), join(out, 'style.css'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWebAssets();
