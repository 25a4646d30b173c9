/**
 * Fairness between users: each user has a few requests served at once and a line for the rest, first
 * come first served. A client that sends one request at a time never waits; one that sends many waits
 * in its own line, so other users' requests keep being served. Only past the line's length, or past
 * its longest wait, is a request refused. Kept per process.
 */

export interface GateLimits {
  /** Requests of one user served at once. */
  inFlight: number;
  /** Requests of one user that may wait; one more is refused. */
  queue: number;
  /** Longest wait in line, in milliseconds. */
  maxWaitMs: number;
}

/** Frees the slot; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  refuse: () => void;
  timer: ReturnType<typeof setTimeout>;
}

interface UserLine {
  serving: number;
  waiting: Waiter[];
}

export class UserRequestGate {
  private readonly lines = new Map<string, UserLine>();

  constructor(private readonly limits: GateLimits) {}

  /**
   * Asks for one of `user`'s slots: `grant` is called with the slot's release now or when one frees,
   * `refuse` when the line is full or the wait too long (never both). Returns a function that takes a
   * waiting request out of the line (its client left); once granted, it does nothing.
   */
  enter(user: string, grant: (release: Release) => void, refuse: () => void): () => void {
    const line = this.lines.get(user) ?? { serving: 0, waiting: [] };
    this.lines.set(user, line);
    if (line.serving < this.limits.inFlight && line.waiting.length === 0) {
      line.serving++;
      grant(this.releaseOf(user, line));
      return () => {};
    }
    if (line.waiting.length >= this.limits.queue) {
      this.forgetIfIdle(user, line);
      refuse();
      return () => {};
    }
    const waiter: Waiter = {
      grant,
      refuse,
      timer: setTimeout(() => {
        if (!this.leave(user, line, waiter)) return;
        refuse();
      }, this.limits.maxWaitMs),
    };
    line.waiting.push(waiter);
    return () => void this.leave(user, line, waiter);
  }

  /** Requests of `user` being served and waiting (for logs and tests). */
  load(user: string): { serving: number; waiting: number } {
    const line = this.lines.get(user);
    return { serving: line?.serving ?? 0, waiting: line?.waiting.length ?? 0 };
  }

  private releaseOf(user: string, line: UserLine): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = line.waiting.shift();
      if (next === undefined) {
        line.serving--;
        this.forgetIfIdle(user, line);
        return;
      }
      // The slot passes straight to the next in line.
      clearTimeout(next.timer);
      next.grant(this.releaseOf(user, line));
    };
  }

  /** False when the waiter had already left the line (granted, refused or gone). */
  private leave(user: string, line: UserLine, waiter: Waiter): boolean {
    const at = line.waiting.indexOf(waiter);
    if (at < 0) return false;
    line.waiting.splice(at, 1);
    clearTimeout(waiter.timer);
    this.forgetIfIdle(user, line);
    return true;
  }

  private forgetIfIdle(user: string, line: UserLine): void {
    if (line.serving === 0 && line.waiting.length === 0) this.lines.delete(user);
  }
}
