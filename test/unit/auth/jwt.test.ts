import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JwtCodec, sameHash, tokenHash } from '../../../src/auth/jwt.js';

const key = randomBytes(32);
const codec = new JwtCodec(key);
const NOW = 1_800_000_000_000;
const claims = { sub: 'alice', jti: '0b3c4a9e-1b7e-4c55-9a57-3a0f2bb0b9a1', iat: NOW / 1000, exp: NOW / 1000 + 3600 };

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
function handMade(header: object, payload: object, signingKey: Uint8Array | undefined, hmac = 'sha256'): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = signingKey ? createHmac(hmac, signingKey).update(input).digest('base64url') : '';
  return `${input}.${signature}`;
}

describe('JwtCodec', () => {
  it('signs HS256 tokens carrying sub, jti, iat and exp, and verifies them', async () => {
    const token = await codec.sign(claims);
    const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual(claims);
    expect(await codec.verify(token, NOW)).toEqual(claims);
  });

  it('matches an independent HMAC-SHA256 signature of the same header and payload', async () => {
    const token = await codec.sign(claims);
    expect(token).toBe(handMade({ alg: 'HS256', typ: 'JWT' }, claims, key));
  });

  it('refuses an expired token (at and after exp)', async () => {
    const token = await codec.sign(claims);
    expect(await codec.verify(token, claims.exp * 1000)).toBeUndefined();
    expect(await codec.verify(token, claims.exp * 1000 + 1)).toBeUndefined();
    expect(await codec.verify(token, claims.exp * 1000 - 1000)).toEqual(claims);
  });

  it('refuses alg none, other algorithms, other keys and tampered payloads', async () => {
    expect(await codec.verify(handMade({ alg: 'none', typ: 'JWT' }, claims, undefined), NOW)).toBeUndefined();
    expect(await codec.verify(handMade({ alg: 'HS512', typ: 'JWT' }, claims, key, 'sha512'), NOW)).toBeUndefined();
    expect(await codec.verify(handMade({ alg: 'HS384', typ: 'JWT' }, claims, key, 'sha384'), NOW)).toBeUndefined();
    expect(await codec.verify(handMade({ alg: 'HS256', typ: 'JWT' }, claims, randomBytes(32)), NOW)).toBeUndefined();
    const token = await codec.sign(claims);
    const [h, , s] = token.split('.');
    expect(await codec.verify(`${h}.${b64url({ ...claims, sub: 'root' })}.${s}`, NOW)).toBeUndefined();
    expect(await codec.verify('not-a-jwt', NOW)).toBeUndefined();
  });

  it('refuses a well-signed token that lacks a required claim', async () => {
    const { jti: _jti, ...noJti } = claims;
    expect(await codec.verify(handMade({ alg: 'HS256', typ: 'JWT' }, noJti, key), NOW)).toBeUndefined();
  });

  it('refuses keys shorter than 32 bytes', () => {
    expect(() => new JwtCodec(randomBytes(31))).toThrow(/32 bytes/);
  });
});

describe('token hashes', () => {
  it('are SHA-256 hex and compare exactly', () => {
    expect(tokenHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sameHash(tokenHash('abc'), tokenHash('abc'))).toBe(true);
    expect(sameHash(tokenHash('abc'), tokenHash('abd'))).toBe(false);
    expect(sameHash('short', tokenHash('abc'))).toBe(false);
  });
});

describe('verification agrees with jose (differential)', () => {
  it('accepts exactly what jose accepts with HS256 pinned, for tokens with random single-character edits', async () => {
    const { jwtVerify } = await import('jose');
    const fc = (await import('fast-check')).default;
    const token = await codec.sign(claims);
    await fc.assert(
      fc.asyncProperty(fc.nat(token.length - 1), fc.constantFrom(...'AQgw_-.=+/aZ09'), async (index, replacement) => {
        const edited = token.slice(0, index) + replacement + token.slice(index + 1);
        const joseSays = await jwtVerify(edited, key, { algorithms: ['HS256'], currentDate: new Date(NOW), requiredClaims: ['sub', 'jti', 'iat', 'exp'] }).then(
          (r) => r.payload,
          () => undefined,
        );
        const oursSays = codec.verify(edited, NOW);
        if (joseSays === undefined) expect(oursSays).toBeUndefined();
        else expect(oursSays).toEqual({ sub: joseSays.sub, jti: joseSays.jti, iat: joseSays.iat, exp: joseSays.exp });
      }),
      { numRuns: 300 },
    );
  });
});
