import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/auth/duration.js';

const YEAR = 365 * 86_400;

describe('parseDuration: accepted forms', () => {
  it.each([
    ['1 seconds', 1],
    ['1 second', 1],
    ['45 s', 45],
    ['45s', 45],
    ['45 sec', 45],
    ['45 secs', 45],
    ['1 minute', 60],
    ['2 minutes', 120],
    ['2 m', 120],
    ['2 min', 120],
    ['2 mins', 120],
    ['1 hour', 3_600],
    ['12 hours', 43_200],
    ['12 h', 43_200],
    ['12 hr', 43_200],
    ['12 hrs', 43_200],
    ['1.5 hours', 5_400],
    ['0.3 minutes', 18],
    ['1 day', 86_400],
    ['30 days', 2_592_000],
    ['30 d', 2_592_000],
    ['1 week', 604_800],
    ['2 weeks', 1_209_600],
    ['2 w', 1_209_600],
    ['365 days', YEAR],
    ['52 weeks', 52 * 604_800],
    ['3600', 3_600],
    ['  7 Days  ', 604_800],
    ['1 HOURS', 3_600],
    ['1.9 seconds', 1],
  ])('%j is %d seconds', (text, seconds) => {
    expect(parseDuration(text, YEAR)).toEqual({ ok: true, seconds });
  });
});

describe('parseDuration: refused forms', () => {
  it.each([
    [''],
    ['   '],
    ['days'],
    ['0'],
    ['0 days'],
    ['0.4 seconds'],
    ['-1 days'],
    ['+1 days'],
    ['1 fortnight'],
    ['1 months'],
    ['1 years'],
    ['1.5'],
    ['1e3 seconds'],
    ['1,5 hours'],
    ['1 day 2 hours'],
    ['366 days'],
    ['53 weeks'],
    ['Infinity'],
    ['NaN days'],
    ['0x10 s'],
    ['1 .5 hours'],
    ['99999999999999999999 days'],
  ])('%j is refused', (text) => {
    const result = parseDuration(text, YEAR);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason.length).toBeGreaterThan(5);
  });

  it('names the maximum when over it', () => {
    expect(parseDuration('2 hours', 3_600)).toEqual({ ok: false, reason: 'must be at most 3600 seconds' });
    expect(parseDuration('1 hours', 3_600)).toEqual({ ok: true, seconds: 3_600 });
  });
});
