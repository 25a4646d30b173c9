/**
 * The settings of an Electrum server as the chain source (`electrum_url`, `electrum_tls_fingerprint`,
 * `electrum_proxy`), and the check that one chain source is configured, not two. Part of SETTINGS (settings.ts).
 */
import { isIP } from 'node:net';
import type { Draft, Setting } from './config-types.js';
import { isHostName, optionalText } from './setting-values.js';

export interface ElectrumConfig {
  /** `tcp://host:port` or `ssl://host:port`. */
  url: string | undefined;
  /** SHA-256 of the server's certificate, lowercase hex without colons: pinned instead of the system's CAs. */
  tlsFingerprint: string | undefined;
  /** `socks5://host:port` (e.g. Tor): the server is reached through it, its host name resolved by the proxy. */
  proxy: string | undefined;
}

export const NO_ELECTRUM: ElectrumConfig = { url: undefined, tlsFingerprint: undefined, proxy: undefined };

/** `scheme://host:port` with one of `schemes`, nothing else (no credentials, path or query); the port is required. */
function hostPortAddress(text: string, schemes: readonly string[], example: string): string {
  const trimmed = text.trim();
  const match = /^([a-z0-9]+):\/\/(\[[^\]/]+\]|[^:/@[\]\s]+):(\d{1,5})\/?$/i.exec(trimmed);
  const scheme = match?.[1]?.toLowerCase();
  if (!match || !scheme || !schemes.includes(scheme)) throw new Error(`must be an address like ${example}`);
  const host = match[2]!;
  const unbracketed = host.startsWith('[') ? host.slice(1, -1) : host;
  const hostOk = host.startsWith('[') ? isIP(unbracketed) === 6 : isIP(host) === 4 || isHostName(host);
  const port = Number(match[3]);
  if (!hostOk || port < 1 || port > 65535) throw new Error(`must be an address like ${example}`);
  // `electrum.example.` names the same server as `electrum.example`, which its certificate and the proxy know.
  return `${scheme}://${host.toLowerCase().replace(/\.$/, '')}:${port}`;
}

/** 32 bytes of hex, as `openssl x509 -fingerprint -sha256` prints it (colons) or without colons. */
function sha256Fingerprint(text: string): string {
  const trimmed = text.trim();
  const hex = /^[0-9a-f]{2}(?::[0-9a-f]{2}){31}$/i.test(trimmed) ? trimmed.replaceAll(':', '') : trimmed;
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error('must be a SHA-256 fingerprint: 64 hex digits, colons between pairs allowed');
  return hex.toLowerCase();
}

export const ELECTRUM_SETTINGS: readonly Setting[] = [
  { key: 'electrum_url', env: 'SERVICE_ELECTRUM_URL', flag: '--electrum-url', defaultText: 'none', description: 'An Electrum server to follow the chain through instead of Bitcoin Core, e.g. `ssl://electrum.example:50002` or `tcp://127.0.0.1:50001` (Fulcrum, ElectrumX, electrs). Give this or `bitcoind_url`, not both.',
    apply: (d, t) => { d.electrum.url = optionalText(t, (u) => hostPortAddress(u, ['tcp', 'ssl'], 'ssl://host:50002 or tcp://host:50001')); } },
  { key: 'electrum_tls_fingerprint', env: 'SERVICE_ELECTRUM_TLS_FINGERPRINT', flag: '--electrum-tls-fingerprint', defaultText: 'none (the system\'s certificate authorities)', description: 'SHA-256 fingerprint of the Electrum server\'s certificate (hex, colons allowed), trusted instead of the system\'s certificate authorities: for a server with a self-signed certificate. Only with an `ssl://` `electrum_url`.',
    apply: (d, t) => { d.electrum.tlsFingerprint = optionalText(t, sha256Fingerprint); } },
  { key: 'electrum_proxy', env: 'SERVICE_ELECTRUM_PROXY', flag: '--electrum-proxy', defaultText: 'none (direct)', description: 'A SOCKS5 proxy to reach the Electrum server through, e.g. `socks5://127.0.0.1:9050` (Tor; the proxy resolves the server\'s name, so `.onion` works).',
    apply: (d, t) => { d.electrum.proxy = optionalText(t, (p) => hostPortAddress(p, ['socks5'], 'socks5://127.0.0.1:9050')); } },
];

/**
 * One line naming the setting, and where it came from (`originOf` its key: the flag, variable or config.json key),
 * when the chain settings do not fit together; undefined when they do.
 */
export function chainSettingsConflict(draft: Pick<Draft, 'bitcoind' | 'electrum'>, originOf: (key: string) => string): string | undefined {
  const { electrum } = draft;
  if (electrum.url !== undefined && draft.bitcoind.url !== undefined) {
    return `Invalid setting SERVICE_ELECTRUM_URL (from ${originOf('electrum_url')}): the chain is followed through Bitcoin Core or an Electrum server; give SERVICE_BITCOIND_URL (bitcoind_url) or SERVICE_ELECTRUM_URL (electrum_url), not both`;
  }
  if (electrum.tlsFingerprint !== undefined && !electrum.url?.startsWith('ssl://')) {
    return `Invalid setting SERVICE_ELECTRUM_TLS_FINGERPRINT (from ${originOf('electrum_tls_fingerprint')}): only with an ssl:// SERVICE_ELECTRUM_URL (electrum_url)`;
  }
  if (electrum.proxy !== undefined && electrum.url === undefined) {
    return `Invalid setting SERVICE_ELECTRUM_PROXY (from ${originOf('electrum_proxy')}): only with SERVICE_ELECTRUM_URL (electrum_url)`;
  }
  return undefined;
}

/** What config.json holds of one chain source, set aside when the other is given by flag or variable. */
const REPLACED_BY: Readonly<Record<string, readonly string[]>> = {
  electrum_url: ['bitcoind_url'],
  bitcoind_url: ['electrum_url', 'electrum_tls_fingerprint', 'electrum_proxy'],
};

/**
 * The config.json keys to leave out because a flag or variable names the other chain source: a service
 * remembered with one source (src/cli/remembered-settings.ts) can be started with the other without editing
 * the file. Both given the same way still stop the start (chainSettingsConflict).
 */
export function chainSettingsReplaced(givenKeys: Iterable<string>): Set<string> {
  const replaced = new Set<string>();
  for (const key of givenKeys) for (const other of REPLACED_BY[key] ?? []) replaced.add(other);
  return replaced;
}
