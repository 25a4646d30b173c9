/** Amounts and times as the pages show them: exact BTC from integer satoshis, never through floating point. */

/** `123456789` sat -> `1.23456789`. */
export function btcText(sats: number | bigint): string {
  const value = BigInt(sats);
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  const whole = abs / 100_000_000n;
  const fraction = (abs % 100_000_000n).toString().padStart(8, '0');
  return `${sign}${whole}.${fraction}`;
}

/** `1234567` -> `1,234,567`. */
export function satText(sats: number | bigint): string {
  return BigInt(sats).toLocaleString('en-US');
}

export function dateText(epochSeconds: number): string {
  if (!epochSeconds) return '';
  return new Date(epochSeconds * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function shortId(id: string): string {
  return id.length > 20 ? `${id.slice(0, 10)}…${id.slice(-8)}` : id;
}
