// The operator's entry point: configuration from TESSERA_* variables (and
// TESSERA_CONFIG), the kubeconfig or in-cluster credentials, SIGTERM/SIGINT
// to drain, and the runtime's exit codes (0 done, 1 failed, 2 bad config).
// Each reconciler declares its mode (leader or sharded) in its controller().
import { Manager, runMain } from "@tessera/runtime";
import { reconcilers } from "./controllers/index.js";

await runMain(async (signal) => {
  const manager = await Manager.create({ config: { name: "webapp" } });
  manager.register(...reconcilers);
  await manager.run(signal);
});
