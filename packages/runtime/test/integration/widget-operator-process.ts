// One replica of the Widget operator as its own process, for the leader and
// sharded tests: the runtime as an operator's main would use it, configured
// by TESSERA_* environment variables (mode, identity, namespace, durations,
// bind addresses) and KUBECONFIG. Prints one JSON line per reconcile
// ({ev:"start"} and {ev:"reconcile", ...ReconcileRecord}), {ev:"listening"} with the ports its
// probe and metrics servers got (bind them to port 0: a port picked free beforehand can be taken
// by another process's connection before the replica binds it), and {ev:"ready"} once its caches synced;
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
  const listening = manager
    .endpoints()
    .then(({ health, metrics }) => emit({ ev: "listening", health: health?.port, metrics: metrics?.port }));
  if (await manager.waitForSync(signal)) {
    await listening; // so that "listening" comes first
    emit({ ev: "ready", identity: manager.config.identity, pid: process.pid });
  }
  await running;
  emit({ ev: "stopped", identity: manager.config.identity });
});
