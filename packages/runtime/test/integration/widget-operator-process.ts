// One replica of the Widget operator as its own process, for the leader and
// sharded tests: the runtime as an operator's main would use it, configured
// by TESSERA_* environment variables (mode, identity, namespace, durations,
// bind addresses) and KUBECONFIG. Prints one JSON line per reconcile
// ({ev:"start"} and {ev:"reconcile", ...ReconcileRecord}) and {ev:"ready"} once its caches synced;
// stdout writes to a pipe are synchronous, so a line written before a
// SIGKILL reaches the test.
import { ContainerModule } from "inversify";
import { Manager, runMain } from "../../src/index.js";
import { LedgerToken, WidgetReconciler, type ReconcileRecord } from "./widget.js";

const emit = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + "\n");

await runMain(async (signal) => {
  const manager = await Manager.create();
  manager.register(
    new ContainerModule(({ bind }) => {
      bind(LedgerToken).toConstantValue({
        started: (key: string, at: number) => emit({ ev: "start", key, start: at }),
        finished: (record: ReconcileRecord) => emit({ ev: "reconcile", ...record }),
      });
    }),
  );
  manager.register(WidgetReconciler);
  const running = manager.run(signal);
  if (await manager.waitForSync(signal))
    emit({ ev: "ready", identity: manager.config.identity, pid: process.pid });
  await running;
  emit({ ev: "stopped", identity: manager.config.identity });
});
