/** Remembers every registered path and its methods, to answer 405 with an `Allow` header. */
import type { FastifyInstance } from 'fastify';

interface Entry {
  pattern: RegExp;
  methods: Set<string>;
}

export class RouteTable {
  private readonly entries = new Map<string, Entry>();

  /** Starts recording; call before routes are registered. */
  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      this.add(route.url, methods);
    });
  }

  add(url: string, methods: readonly string[]): void {
    const key = url.replace(/\/+$/, '') || '/';
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { pattern: toPattern(key), methods: new Set() };
      this.entries.set(key, entry);
    }
    for (const m of methods) entry.methods.add(m.toUpperCase());
  }

  /** Methods of the registered path matching `url` (query ignored); empty when none matches. */
  methodsFor(url: string): string[] {
    const path = (url.split('?')[0] ?? '').replace(/\/+$/, '') || '/';
    const methods = new Set<string>();
    for (const entry of this.entries.values()) {
      if (entry.pattern.test(path)) for (const m of entry.methods) methods.add(m);
    }
    return [...methods].sort();
  }
}

function toPattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}
