import { requirePermission } from './permissions.js';
import type { Principal } from './principal.js';

/** Liveness and readiness. Readiness runs a list of named checks; other parts add theirs (chain). */

export interface ReadinessCheck {
  /** Shown as the key in `checks`, e.g. `store`, `chain`. */
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) otherwise. */
  check(): Promise<void>;
  /** The rejection's message is fit for users (no address, path or credential) and is shown as the reason. */
  publicReason?: boolean;
}

export type CheckState = 'ok' | 'failing';

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
  /** Why a failing check fails, for the checks whose reasons are public. */
  reasons: Record<string, string>;
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
    const results = await Promise.all(this.checks.map(async (c) => [c, await this.run(c)] as const));
    const checks: Record<string, CheckState> = Object.fromEntries(results.map(([c, r]) => [c.name, r.state]));
    const reasons: Record<string, string> = {};
    for (const [c, r] of results) if (r.state === 'failing' && c.publicReason && r.reason) reasons[c.name] = r.reason;
    return { ready: results.every(([, r]) => r.state === 'ok'), checks, reasons };
  }

  /** Readiness for an authenticated caller: a narrowed token needs `service:read`. */
  async readinessFor(principal: Principal): Promise<Readiness> {
    requirePermission(principal, 'service:read');
    return this.readiness();
  }

  private async run(check: ReadinessCheck): Promise<{ state: CheckState; reason?: string }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), this.timeoutMs);
    });
    try {
      await Promise.race([check.check(), timeout]);
      return { state: 'ok' };
    } catch (error) {
      return { state: 'failing', reason: error instanceof Error ? error.message : undefined };
    } finally {
      clearTimeout(timer);
    }
  }
}
