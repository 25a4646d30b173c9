/** A clock tests move by hand (token expiry, rate-limit windows) instead of sleeping. */
export class TestClock {
  // Starts on a whole second, so remaining lifetimes come out exact.
  constructor(private ms = Math.floor(Date.now() / 1000) * 1000) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
