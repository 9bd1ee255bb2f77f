// One ring replica as its own process, for the multi-process integration test:
// a ShardMember and a RingCoordinator with short durations. It prints one JSON
// line per event on stdout: gain/lose of slots (with a machine-wide monotonic
// time in microseconds), applied epochs, and "stopped" after a graceful SIGTERM.
// Usage: node ring-member-process.js <kubeconfig> <namespace> <ring> <identity>
import { KubeConfig } from "@kubernetes/client-node";
import { RingCoordinator, ShardMember } from "../../src/index.js";

const [kubeconfigPath, namespace, ring, identity] = process.argv.slice(2) as [string, string, string, string];
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
// A 2 s renew deadline proved too tight for a member starting on a loaded 2-core machine (it fenced itself).
const durations = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
const now = () => Number(process.hrtime.bigint() / 1000n);
const emit = (event: Record<string, unknown>) =>
  process.stdout.write(JSON.stringify({ ...event, identity }) + "\n");

const member = new ShardMember({
  kubeConfig,
  namespace,
  ring,
  identity,
  pollIntervalMs: 200,
  ...durations,
  onAssignment: ({ epoch, gained, lost, active }) => {
    if (lost.size > 0) emit({ ev: "lose", slots: [...lost], t: now(), epoch });
    if (gained.size > 0) emit({ ev: "gain", slots: [...gained], t: now(), epoch });
    emit({ ev: "active", epoch, count: active.size });
  },
});
const coordinator = new RingCoordinator({
  kubeConfig,
  namespace,
  ring,
  identity,
  pollIntervalMs: 200,
  expiryMarginMs: 1_000,
  election: durations,
});
const stop = new AbortController();
const leave = new AbortController();
member.fence.addEventListener("abort", () => emit({ ev: "fenced", t: now() }));
const membership = member.run(leave.signal);
if (!(await member.joined())) await membership; // rejects with why it could not join
const coordinating = coordinator.run(stop.signal);
const reportLeader = setInterval(() => emit({ ev: "leader", leading: coordinator.isLeader }), 200);
const reportEpoch = setInterval(() => emit({ ev: "epoch", epoch: member.epoch ?? -1 }), 200);
process.once("SIGTERM", () => {
  void (async () => {
    clearInterval(reportLeader);
    clearInterval(reportEpoch);
    stop.abort();
    await coordinating;
    leave.abort();
    await membership;
    emit({ ev: "stopped", t: now() });
    process.exit(0);
  })();
});
