/** The block height a wallet's scan starts from, for a birthday given as the tip or a date. */
import type { HeaderSource } from '../chain/types.js';

/** Two hours: block times may run behind the clock by that much. */
const BLOCK_TIME_SLACK_SECONDS = 7_200;

export async function birthdayHeight(source: HeaderSource, birthday: { kind: 'tip' } | { kind: 'date'; epochSeconds: number }): Promise<number> {
  const tip = await source.getTip();
  if (birthday.kind === 'tip') return tip.height;
  // First block whose time is not before the date (less the slack), by binary search over the headers.
  const target = birthday.epochSeconds - BLOCK_TIME_SLACK_SECONDS;
  let low = 0;
  let high = tip.height + 1;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    const header = await source.getBlockHeader(await source.getBlockHash(mid));
    if (header.time < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
