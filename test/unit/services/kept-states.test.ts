/** The reads' keeping bounds: count, weight and idle time, on a clock the test moves. */
import { afterEach, describe, expect, it } from 'vitest';
import { KeptStates, type KeepingBounds } from '../../../src/services/kept-states.js';

describe('kept states', () => {
  let now = 0;
  const made: KeptStates<string>[] = [];
  const kept = (bounds: Partial<KeepingBounds>) => {
    const states = new KeptStates<string>({ count: 100, budget: 1_000, idleMs: 0, ...bounds }, () => now);
    made.push(states);
    return states;
  };
  afterEach(() => {
    for (const states of made.splice(0)) states.stop();
    now = 0;
  });

  it('tells each value dropped, replaced, pushed out or idle, and not one weighed again', () => {
    const dropped: string[] = [];
    const states = new KeptStates<string>({ count: 2, budget: 100, idleMs: 10 }, () => now, (id, value) => dropped.push(`${id}=${value}`));
    made.push(states);
    states.keep('a', 'A', 40);
    states.reweigh('a', 'A', 50); // the same value: not dropped
    states.keep('a', 'A2', 50); // replaced
    states.keep('b', 'B', 10);
    states.keep('c', 'C', 10); // past the count: a goes
    states.delete('b');
    now = 20;
    states.dropIdle();
    expect(dropped).toEqual(['a=A', 'a=A2', 'b=B', 'c=C']);
    expect(states.ids()).toEqual([]);
  });

  it('drops the least recently read past the budget, never the one just kept, and counts weights that change', () => {
    const states = kept({ budget: 100 });
    states.keep('a', 'A', 40);
    states.keep('b', 'B', 40);
    states.touch('a'); // b is now the least recently read
    states.keep('c', 'C', 30);
    expect(states.ids()).toEqual(['a', 'c']);
    expect(states.weight()).toBe(70);
    // One heavier than the whole budget stays alone.
    states.keep('huge', 'H', 500);
    expect(states.ids()).toEqual(['huge']);
    expect(states.weight()).toBe(500);
    states.keep('d', 'D', 10);
    expect(states.ids()).toEqual(['d']);
    // A state that grows past the budget as it follows new rows drops the others.
    states.keep('e', 'E', 10);
    states.reweigh('d', 'D', 95);
    expect(states.ids()).toEqual(['d']);
    expect(states.weight()).toBe(95);
    // A value no longer kept (dropped, or replaced) is not kept again by its new weight.
    states.reweigh('e', 'E', 1);
    states.reweigh('d', 'older D', 1);
    expect(states.ids()).toEqual(['d']);
    expect(states.weight()).toBe(95);
    states.delete('d');
    expect(states.weight()).toBe(0);
  });

  it('keeps the count bound besides the budget', () => {
    const states = kept({ count: 2 });
    for (const id of ['a', 'b', 'c']) states.keep(id, id, 1);
    expect(states.ids()).toEqual(['b', 'c']);
    expect(states.weight()).toBe(2);
  });

  it('drops those unread for the idle time, and none with it off', () => {
    const states = kept({ idleMs: 600_000 });
    states.keep('a', 'A', 1);
    now = 300_000;
    states.keep('b', 'B', 1);
    now = 599_999;
    states.dropIdle();
    expect(states.ids()).toEqual(['a', 'b']);
    now = 600_000;
    states.touch('b');
    states.dropIdle();
    expect(states.ids()).toEqual(['b']);
    now = 1_199_999;
    states.dropIdle();
    expect(states.ids()).toEqual(['b']);
    now = 1_200_000;
    states.dropIdle();
    expect(states.ids()).toEqual([]);
    const forever = kept({ idleMs: 0 });
    forever.keep('a', 'A', 1);
    now = 1e12;
    forever.dropIdle();
    expect(forever.ids()).toEqual(['a']);
  });
});
