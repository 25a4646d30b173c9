import { describe, expect, it } from 'vitest';
import { UserRequestGate, type Release } from '../../../src/api/user-request-gate.js';

/** Enters one request; what happened to it so far. */
function enter(gate: UserRequestGate, user: string) {
  const state: { release?: Release; refused: boolean } = { refused: false };
  const leave = gate.enter(user, (release) => (state.release = release), () => (state.refused = true));
  return { state, leave };
}

describe('UserRequestGate', () => {
  it('serves up to inFlight at once, lines up the rest first come first served, and refuses past the line', () => {
    const gate = new UserRequestGate({ inFlight: 2, queue: 2, maxWaitMs: 60_000 });
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => enter(gate, 'alice'));
    expect([a, b, c, d].map((r) => r!.state.release !== undefined)).toEqual([true, true, false, false]);
    expect(e!.state.refused).toBe(true);
    expect(gate.load('alice')).toEqual({ serving: 2, waiting: 2 });
    // Another user is not in alice's line.
    expect(enter(gate, 'bob').state.release).toBeDefined();
    b!.state.release!();
    b!.state.release!(); // twice frees one slot only
    expect(c!.state.release).toBeDefined();
    expect(d!.state.release).toBeUndefined();
    a!.state.release!();
    expect(d!.state.release).toBeDefined();
    c!.state.release!();
    d!.state.release!();
    expect(gate.load('alice')).toEqual({ serving: 0, waiting: 0 });
  });

  it('takes a request that leaves out of the line, and refuses one that waited too long', async () => {
    const gate = new UserRequestGate({ inFlight: 1, queue: 1, maxWaitMs: 20 });
    const first = enter(gate, 'alice');
    const gone = enter(gate, 'alice');
    gone.leave();
    expect(gate.load('alice')).toEqual({ serving: 1, waiting: 0 });
    const waiting = enter(gate, 'alice');
    expect(waiting.state.refused).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(waiting.state).toEqual({ refused: true });
    first.state.release!();
    expect(gone.state.release).toBeUndefined();
    expect(gate.load('alice')).toEqual({ serving: 0, waiting: 0 });
  });
});
