/**
 * Duration text of token lifetimes: `<n> <unit>` (seconds, minutes, hours, days, weeks in singular,
 * plural and short forms; decimals allowed) or a bare integer meaning seconds.
 */

const SECONDS_PER_UNIT: ReadonlyMap<string, number> = new Map([
  ...['s', 'sec', 'secs', 'second', 'seconds'].map((u) => [u, 1] as const),
  ...['m', 'min', 'mins', 'minute', 'minutes'].map((u) => [u, 60] as const),
  ...['h', 'hr', 'hrs', 'hour', 'hours'].map((u) => [u, 3600] as const),
  ...['d', 'day', 'days'].map((u) => [u, 86_400] as const),
  ...['w', 'week', 'weeks'].map((u) => [u, 604_800] as const),
]);

const DURATION = /^\s*(\d{1,15}(?:\.\d{1,9})?)\s*([a-z]+)?\s*$/i;
const BARE_INTEGER = /^\s*\d{1,15}\s*$/;

export type DurationResult = { ok: true; seconds: number } | { ok: false; reason: string };

/**
 * Parses duration text into whole seconds (fractions of a second are dropped).
 * The result is at least 1 and at most `maxSeconds`.
 */
export function parseDuration(text: string, maxSeconds: number): DurationResult {
  const match = DURATION.exec(text);
  if (!match) return { ok: false, reason: 'must be a duration such as "30 days", "12 hours" or a number of seconds' };
  const [, amountText = '', unitText] = match;
  if (unitText === undefined && !BARE_INTEGER.test(text)) {
    return { ok: false, reason: 'a number without a unit must be a whole number of seconds' };
  }
  const perUnit = unitText === undefined ? 1 : SECONDS_PER_UNIT.get(unitText.toLowerCase());
  if (perUnit === undefined) {
    return { ok: false, reason: `unknown unit "${unitText}"; use seconds, minutes, hours, days or weeks` };
  }
  // Exact decimal arithmetic: "0.3 minutes" is 18 seconds, not 17.999....
  const [whole = '0', fraction = ''] = amountText.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const seconds = ((BigInt(whole) * scale + BigInt(fraction || '0')) * BigInt(perUnit)) / scale;
  if (seconds < 1n) return { ok: false, reason: 'must be at least 1 second' };
  if (seconds > BigInt(maxSeconds)) return { ok: false, reason: `must be at most ${maxSeconds} seconds` };
  return { ok: true, seconds: Number(seconds) };
}
