/**
 * The stylesheet and script bundle, built by scripts/build-web.mjs into dist/web/assets and served
 * by the service itself (no CDN). Their URLs carry a content hash (`?v=`), so they may be cached for good.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface WebAssets {
  folder: string;
  /** URL path of each asset by its plain name (`app.js`, `style.css`). */
  urls: Record<'app.js' | 'style.css', string>;
}

/** dist/web/assets of this package, from src/ (tests) or dist/ (the built service). */
export function assetFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the web module');
    dir = parent;
  }
  return join(dir, 'dist', 'web', 'assets');
}

export function loadAssets(folder = assetFolder()): WebAssets {
  const url = (name: 'app.js' | 'style.css') => {
    const path = join(folder, name);
    if (!existsSync(path)) throw new Error(`The web interface's ${name} is not built: run npm run build`);
    const hash = createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 12);
    return `/assets/${name}?v=${hash}`;
  };
  return { folder, urls: { 'app.js': url('app.js'), 'style.css': url('style.css') } };
}
