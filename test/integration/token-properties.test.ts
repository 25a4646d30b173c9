/** Property tests: random bodies and ids at the token endpoints never give a 500 and never create an invalid token. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/auth/duration.js';
import { TEST_ADMIN_PASSWORD, basicAuth, request, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const admin = basicAuth('admin', TEST_ADMIN_PASSWORD);
beforeAll(async () => {
  server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '100000' } });
});
afterAll(() => server.dispose());

const durationText = fc.oneof(
  fc.tuple(fc.oneof(fc.nat(1000).map(String), fc.float({ min: 0, max: 400, noNaN: true }).map((n) => n.toFixed(2)), fc.constant('-1')),
    fc.constantFrom('', ' ', '  '),
    fc.constantFrom('s', 'sec', 'seconds', 'm', 'min', 'minutes', 'h', 'hr', 'hours', 'd', 'days', 'w', 'weeks', 'months', 'x', ''))
    .map(([n, space, unit]) => `${n}${space}${unit}`),
  fc.string(),
);
const description = fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom('', '   ', 'x'.repeat(256), 'x'.repeat(257)));
const anyValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 }));
const body = fc.oneof(
  fc.record({ jwt_token_description: fc.oneof(description, anyValue), jwt_token_life: fc.oneof(durationText, anyValue), extra: anyValue }, { requiredKeys: [] }),
  fc.record({ jwt_token_description: description, jwt_token_life: durationText }),
  anyValue,
);

function isValid(value: unknown, used: Set<string>): 'created' | 'duplicate' | 'invalid' {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const { jwt_token_description: d, jwt_token_life: l } = value as Record<string, unknown>;
  // A JSON number of seconds reads like its text without a unit.
  if (typeof d !== 'string' || (typeof l !== 'string' && typeof l !== 'number')) return 'invalid';
  const trimmed = d.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > 256 || !parseDuration(String(l), 365 * 86_400).ok) return 'invalid';
  return used.has(trimmed) ? 'duplicate' : 'created';
}

async function tokenCount(): Promise<number> {
  return Object.keys((await request(`${server.api}/token`, { headers: { authorization: admin } })).body.jwt_tokens).length;
}

describe('token endpoints under random input', () => {
  it('POST /token: 201 exactly for valid bodies, 409 for duplicates, 400 otherwise; never 500', async () => {
    const used = new Set<string>();
    let count = await tokenCount();
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: JSON.stringify(value) });
        const expected = isValid(value, used);
        expect(response.status).toBe({ created: 201, duplicate: 409, invalid: 400 }[expected]);
        expect(typeof response.body.message).toBe('string');
        if (expected === 'created') {
          used.add((value as { jwt_token_description: string }).jwt_token_description.trim());
          count += 1;
        } else {
          expect(response.body.code).toMatch(/^[a-z_]+$/);
        }
        expect(await tokenCount()).toBe(count);
      }),
      { numRuns: 60 },
    );
  });

  it('POST /token with random raw bytes as the body never gives a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: raw });
        expect(response.status).toBeLessThan(500);
        if (response.status !== 201) expect(response.body.code).toMatch(/^[a-z_]+$/);
      }),
      { numRuns: 40 },
    );
  });

  it('GET and DELETE /token/{id} with random ids answer 404, never 500', async () => {
    await fc.assert(
      // '.' and '..' are dot segments the client itself resolves to another path.
      fc.asyncProperty(fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s !== '.' && s !== '..')), fc.constantFrom('GET', 'DELETE'), async (id, method) => {
        const response = await request(`${server.api}/token/${encodeURIComponent(id)}`, { method, headers: { authorization: admin } });
        expect([400, 404]).toContain(response.status);
        expect(response.body.code).toMatch(/^[a-z_]+$/);
      }),
      { numRuns: 40 },
    );
  });
});
