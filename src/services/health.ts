/** Liveness and readiness. Readiness runs a list of named checks; other parts add theirs (chain). */

export interface ReadinessCheck {
  /** Shown as the key in `checks`, e.g. `store`, `chain`. */
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) otherwise. */
  check(): Promise<void>;
}

export type CheckState = 'ok' | 'failing';

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
}

export class HealthService {
  private readonly checks: ReadinessCheck[] = [];

  constructor(
    checks: readonly ReadinessCheck[] = [],
    private readonly timeoutMs = 2_000,
  ) {
    for (const check of checks) this.addCheck(check);
  }

  addCheck(check: ReadinessCheck): void {
    if (this.checks.some((c) => c.name === check.name)) throw new Error(`Readiness check ${check.name} is already registered`);
    this.checks.push(check);
  }

  async readiness(): Promise<Readiness> {
    const results = await Promise.all(this.checks.map(async (c) => [c.name, await this.run(c)] as const));
    const checks: Record<string, CheckState> = Object.fromEntries(results);
    return { ready: results.every(([, state]) => state === 'ok'), checks };
  }

  private async run(check: ReadinessCheck): Promise<CheckState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), this.timeoutMs);
    });
    try {
      await Promise.race([check.check(), timeout]);
      return 'ok';
    } catch {
      return 'failing';
    } finally {
      clearTimeout(timer);
    }
  }
}
