/** What one check answers. */
export type CheckResult = { ok: true } | { ok: false; reason: string };

/** A named liveness or readiness check; may be async. */
export type Check = () => CheckResult | Promise<CheckResult>;

/** The answer of a probe endpoint: its HTTP status and text body. */
export interface ProbeAnswer {
  readonly status: 200 | 404 | 500;
  readonly body: string;
}

/**
 * The checks behind `/healthz` (liveness: restart me) and `/readyz`
 * (readiness: send me traffic, count me in). The manager adds its own
 * (watches heard, workers not stuck, caches synced, leases renewing);
 * operators add theirs before `run`. A check that throws fails with the
 * error's message.
 */
export class HealthChecks {
  private readonly checks = { healthz: new Map<string, Check>(), readyz: new Map<string, Check>() };

  addHealthCheck(name: string, check: Check): void {
    this.checks.healthz.set(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.checks.readyz.set(name, check);
  }

  /** The names of the checks of `kind`. */
  names(kind: "healthz" | "readyz"): string[] {
    return [...this.checks[kind].keys()];
  }

  /**
   * Runs the checks of `kind` (only `only` when given) as kube-apiserver's
   * probes answer: 200 `ok`, or 500 with `[-]name failed: reason` per
   * failing check; `verbose` lists passing checks as `[+]name ok` too.
   */
  async probe(
    kind: "healthz" | "readyz",
    options: { verbose?: boolean; only?: string } = {},
  ): Promise<ProbeAnswer> {
    let checks = [...this.checks[kind]];
    if (options.only !== undefined) {
      checks = checks.filter(([name]) => name === options.only);
      if (checks.length === 0) return { status: 404, body: `no ${kind} check named "${options.only}"\n` };
    }
    const results = await Promise.all(
      checks.map(async ([name, check]): Promise<[string, CheckResult]> => {
        try {
          return [name, await check()];
        } catch (error) {
          return [name, { ok: false, reason: error instanceof Error ? error.message : String(error) }];
        }
      }),
    );
    const failed = results.filter(([, r]) => !r.ok);
    const lines = results
      .filter(([, r]) => options.verbose || !r.ok)
      .map(([name, r]) => (r.ok ? `[+]${name} ok` : `[-]${name} failed: ${r.reason}`));
    if (failed.length === 0) {
      return { status: 200, body: options.verbose ? `${lines.join("\n")}\n${kind} check passed\n` : "ok" };
    }
    return { status: 500, body: `${lines.join("\n")}\n${kind} check failed\n` };
  }
}
