/**
 * JWT access tokens: HS256 only, on signing and on verification (no `alg: none`, no key confusion).
 * Signing uses jose; verification, on every authenticated request, is a direct HMAC-SHA256 check
 * with node:crypto (see docs/adr/0001-jwt-verification.md: jose's WebCrypto path cost ~10x more).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SignJWT } from 'jose';

export interface TokenClaims {
  /** User name. */
  sub: string;
  /** Token id. */
  jti: string;
  /** Issued at, epoch seconds. */
  iat: number;
  /** Expiry, epoch seconds. */
  exp: number;
}

export class JwtCodec {
  constructor(private readonly key: Uint8Array) {
    if (key.length < 32) throw new Error('The JWT signing key must be at least 32 bytes');
  }

  sign(claims: TokenClaims): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.exp)
      .sign(this.key);
  }

  /** The claims of a well-signed, unexpired token; undefined for anything else. */
  verify(token: string, nowMs: number): TokenClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [headerPart = '', payloadPart = '', signaturePart = ''] = parts;
    if (!BASE64URL.test(headerPart) || !BASE64URL.test(payloadPart) || !BASE64URL.test(signaturePart)) return undefined;
    // The header this service issues is always the same text; anything else is parsed and checked.
    if (headerPart !== ISSUED_HEADER) {
      const header = parseJson(headerPart);
      // Pinned: exactly HS256, and no extension this code does not understand.
      if (!header || header.alg !== 'HS256' || 'crit' in header || (header.typ !== undefined && header.typ !== 'JWT')) return undefined;
    }
    const expected = createHmac('sha256', this.key).update(`${headerPart}.${payloadPart}`).digest();
    const given = Buffer.from(signaturePart, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const payload = parseJson(payloadPart);
    if (!payload) return undefined;
    const { sub, jti, iat, exp } = payload;
    if (typeof sub !== 'string' || typeof jti !== 'string' || !Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return undefined;
    if ((exp as number) * 1000 <= nowMs) return undefined;
    return { sub, jti, iat: iat as number, exp: exp as number };
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** base64url of `{"alg":"HS256","typ":"JWT"}`, the protected header `sign` writes. */
const ISSUED_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function parseJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What the store keeps of a token: its SHA-256, hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Compares two hashes (hex text) in time that depends on their length only. Character by character,
 * without the two buffers timingSafeEqual needs: this runs on every authenticated request.
 */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
