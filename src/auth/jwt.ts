/** JWT access tokens: HS256 only, on signing and on verification (no `alg: none`, no key confusion). */
import { createHash, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

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
  async verify(token: string, nowMs: number): Promise<TokenClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(nowMs),
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      });
      const { sub, jti, iat, exp } = payload;
      if (typeof sub !== 'string' || typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined;
      return { sub, jti, iat, exp };
    } catch {
      return undefined;
    }
  }
}

/** What the store keeps of a token: its SHA-256, hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
