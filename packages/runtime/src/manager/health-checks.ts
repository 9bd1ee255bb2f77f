// Placeholder until the server branch lands its check registry.
export type CheckResult = { ok: true } | { ok: false; reason: string };
export class HealthChecks {
  readonly health = new Map<string, () => CheckResult | Promise<CheckResult>>();
  readonly ready = new Map<string, () => CheckResult | Promise<CheckResult>>();
  addHealthCheck(name: string, check: () => CheckResult | Promise<CheckResult>): void {
    this.health.set(name, check);
  }
  addReadyCheck(name: string, check: () => CheckResult | Promise<CheckResult>): void {
    this.ready.set(name, check);
  }
}
