/**
 * A throwaway self-signed certificate for `localhost` and 127.0.0.1 (made with the `openssl` command), and its
 * SHA-256 fingerprint as an Electrum client pins it.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** Colon-separated upper-case hex, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint256: string;
}

export function selfSignedCertificate(): SelfSignedCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ], { stdio: 'ignore' });
    const cert = readFileSync(certFile, 'utf8');
    return { key: readFileSync(keyFile, 'utf8'), cert, fingerprint256: new X509Certificate(cert).fingerprint256 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
