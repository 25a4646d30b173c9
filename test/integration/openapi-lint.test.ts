/**
 * The OpenAPI document at /docs/openapi.json passes Redocly's recommended rules (no error, no
 * warning), and the docs page names the service. The linter is the `@redocly/cli` devDependency;
 * REDOCLY_CLI may point at another copy of its bin/cli.js.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../support/server.js';

const ROOT = resolve(import.meta.dirname, '../..');
const REDOCLY = process.env.REDOCLY_CLI ?? join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startTestServer();
  folder = mkdtempSync(join(tmpdir(), 'wcs-openapi-'));
});
afterAll(async () => {
  await server.dispose();
  rmSync(folder, { recursive: true, force: true });
});

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

describe('the API description', () => {
  it('passes the Redocly linter with its recommended rules', async () => {
    if (!existsSync(REDOCLY)) throw new Error(`${REDOCLY} is missing: install the devDependencies (npm ci)`);
    const document = await request(`${server.url}/docs/openapi.json`);
    expect(document.status).toBe(200);
    const file = join(folder, 'openapi.json');
    writeFileSync(file, document.text);
    const run = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file], {
      cwd: folder,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    expect(run.stdout, run.stderr).toMatch(/^\s*\{/);
    const report = JSON.parse(run.stdout) as { problems: Problem[] };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    expect(problems).toEqual([]);
  }, 60_000);

  it('gives every operation an operationId, a described success response, 413 and 415 where it takes a body, and the probes no security', async () => {
    const doc = (await request(`${server.url}/docs/openapi.json`)).body;
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        expect(operation.operationId, `${method} ${path}`).toMatch(/^[a-zA-Z]+$/);
        ids.add(operation.operationId);
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
        }
        // A body may be too large, not JSON, or not UTF-8.
        if (operation.requestBody) expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['413', '415']));
      }
    }
    expect(ids.size).toBe(Object.values<Record<string, unknown>>(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0));
    expect(doc.paths['/healthz/live'].get.security).toEqual([]);
    expect(doc.paths['/healthz/ready'].get.security).toEqual([]);
    expect(doc.paths['/api/v1alpha/service'].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it('titles the docs page and heads it with the service name, not the framework logo', async () => {
    const page = await request(`${server.url}/docs/api/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Wallet coordination service REST API documentation</title>');
    expect(page.text).toContain('favicon.svg');
    const initializer = await request(`${server.url}/docs/api/static/swagger-initializer.js`);
    const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(initializer.text)?.[1];
    expect(logo).toBeDefined();
    expect(Buffer.from(logo ?? '', 'base64').toString('utf8')).toContain('>Wallet coordination service<');
    expect((await request(`${server.url}/docs/api/static/theme/favicon.svg`)).status).toBe(200);
  });
});
