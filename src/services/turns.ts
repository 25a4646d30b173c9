/**
 * Long work on the process's one JavaScript thread, cut into parts between which other requests are answered
 * (ADR 0010): a large wallet's load, or an unpaged list of 100,000 coins.
 */

/** Lets the process answer other work (requests, timers) before going on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Items handled between two turns: a few milliseconds' work for the loads and lists here. */
const PART = 2_000;

/** `map` applied to every item in order, `part` items per turn (fewer for costlier items). */
export async function mapInParts<T, U>(items: readonly T[], map: (item: T) => U, part = PART): Promise<U[]> {
  const mapped: U[] = [];
  for (let from = 0; from < items.length; from += part) {
    if (from > 0) await nextTurn();
    const end = Math.min(from + part, items.length);
    for (let i = from; i < end; i++) mapped.push(map(items[i]!));
  }
  return mapped;
}

/** Runs a computation cut into steps (a generator that yields between steps), `part` steps per turn. */
export async function runInParts<T>(steps: Generator<void, T>, part = 50): Promise<T> {
  for (let done = 0; ; done++) {
    if (done > 0 && done % part === 0) await nextTurn();
    const step = steps.next();
    if (step.done) return step.value;
  }
}
