// Helpers shared by the benchmarks that start real server processes.
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers 2xx; polls every 100 ms up to `attempts` times. */
export async function waitFor(url, attempts = 200) {
  for (let i = 0; i < attempts; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}
