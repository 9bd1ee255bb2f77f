import { hostname } from "node:os";
import { KubeConfig } from "@kubernetes/client-node";
import type { Runnable } from "@tessera/core";
import { LeaderElector, LeaseLock } from "@tessera/leader-election";

/** Runs `controllers` on whichever replica holds the Lease, until SIGTERM. */
export async function runAsLeader(controllers: Runnable): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const elector = new LeaderElector({
    // In a pod, the hostname is the pod's name: unique per replica.
    lock: new LeaseLock({ kubeConfig, namespace: "my-system", name: "my-operator", identity: hostname() }),
    callbacks: {
      // Only the leader runs the controllers; they stop when the signal aborts.
      onStartedLeading: (signal) => controllers.run(signal),
      onStoppedLeading: () => console.log("no longer leading"),
      onNewLeader: (identity) => console.log(`leader is ${identity}`),
    },
    logger: console,
  });

  const stop = new AbortController();
  process.once("SIGTERM", () => stop.abort());
  // Settles once leadership has ended, the controllers have stopped and the Lease was handed back.
  const { reason } = await elector.run(stop.signal);
  // "cancelled": we were asked to stop. "renewDeadlineExceeded" or "leaseTaken": we lost the
  // Lease; exit non-zero and let the Deployment restart us as a candidate.
  process.exitCode = reason === "cancelled" ? 0 : 1;
}
