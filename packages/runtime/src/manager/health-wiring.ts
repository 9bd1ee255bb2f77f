import type { SharedInformerFactory } from "@tessera/informers";
import type { HealthChecks } from "../server/health-checks.js";
import type { BuiltController } from "./controller-factory.js";

/**
 * Adds the manager's own checks to `/healthz` and `/readyz`: every informer
 * watching (health), the shared informers synced (ready), and per
 * controller its caches synced (ready), its ring member not fenced (ready)
 * and no worker stuck past twice the reconcile timeout (health).
 */
export function wireHealthChecks(
  health: HealthChecks,
  factory: SharedInformerFactory,
  built: readonly BuiltController[],
): void {
  health.addHealthCheck("watches", () => {
    const informers = [
      ...factory.informers,
      ...built.flatMap((b) => (b.ring ? [b.ring.informer, ...b.ring.ownedInformers] : [])),
    ];
    for (const informer of informers) {
      const state = informer.health();
      if (!state.healthy) return { ok: false, reason: state.reason ?? `informer ${informer.name} is deaf` };
    }
    return { ok: true };
  });
  health.addReadyCheck("informers", () =>
    factory.hasSynced() ? { ok: true } : { ok: false, reason: "informers have not synced" },
  );
  for (const controller of built) wireControllerChecks(health, controller);
}

function wireControllerChecks(health: HealthChecks, { controller, ring }: BuiltController): void {
  health.addReadyCheck(`controller ${controller.name}`, () =>
    controller.hasSynced() || ring !== undefined
      ? { ok: true }
      : { ok: false, reason: `controller ${controller.name}: caches have not synced` },
  );
  if (ring) {
    health.addReadyCheck(`ring ${ring.member.identity}`, () =>
      ring.member.fence.aborted
        ? { ok: false, reason: `ring member ${ring.member.identity} is fenced` }
        : { ok: true },
    );
  }
  health.addHealthCheck(`controller ${controller.name} workers`, () => {
    const stuck = controller.stuckReconciles();
    return stuck.length === 0
      ? { ok: true }
      : {
          ok: false,
          reason: `controller ${controller.name}: ${stuck.map((s) => `${s.key} running ${Math.round(s.runningMs)} ms`).join(", ")} past the reconcile timeout`,
        };
  });
}
