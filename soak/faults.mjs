// How each kind of fault is injected, and ended. A killed replica is replaced
// after the fault, as a Deployment would, so the sharded example keeps 3-5
// replicas and the leader-elected one 2.
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Injects `fault` (from schedule.mjs) and resolves when it has ended, with a
 * short description. `ctx`: { cp, replicas, start(example), leaderOf(prefix, example) }.
 */
export async function inject(fault, ctx) {
  const { cp, replicas } = ctx;
  const sharded = replicas.live("sharded");
  const pickFrom = (list) => list[Math.floor(fault.target * list.length)];
  const proxyTarget = () => pickFrom(replicas.live(fault.onLeaderExample ? "leader" : "sharded"));
  const kill = async (replica, signal, example) => {
    await replicas.stop(replica, signal);
    const wanted = example === "leader" ? 2 : 3;
    let started = 0;
    for (; replicas.live(example).length < wanted; started++) await ctx.start(example);
    return started ? "replaced" : "not replaced";
  };
  // Nothing to aim a replica fault at (all restarting): a restart of the API server instead.
  if (
    /^(proxy|replica|scale-down)/.test(fault.kind) &&
    !(fault.kind.startsWith("proxy") ? proxyTarget() : sharded[0])
  )
    fault.kind = "apiserver-restart";
  switch (fault.kind) {
    case "proxy-cut": {
      // Cuts every connection, again each second, for the duration.
      const r = proxyTarget();
      const until = Date.now() + fault.durationMs;
      while (Date.now() < until) {
        r.proxy.cutAll();
        await sleep(1000);
      }
      return `${r.name} connections cut for ${fault.durationMs} ms`;
    }
    case "proxy-stall": {
      const r = proxyTarget();
      r.proxy.stall(true);
      await sleep(fault.durationMs);
      r.proxy.stall(false);
      return `${r.name} stalled for ${fault.durationMs} ms`;
    }
    case "proxy-latency": {
      const r = proxyTarget();
      r.proxy.setLatency(fault.latencyMs);
      await sleep(fault.durationMs);
      r.proxy.setLatency(0);
      return `${r.name} +${fault.latencyMs} ms latency for ${fault.durationMs} ms`;
    }
    case "apiserver-restart":
      await cp.restartApiserver();
      return "kube-apiserver restarted";
    case "etcd-restart":
      await cp.restartEtcd();
      return "etcd restarted";
    case "etcd-compaction": {
      const revision = await cp.compact({ resetWatchCache: true });
      return `etcd compacted to ${revision}, watch cache reset (older resourceVersions get 410)`;
    }
    case "replica-sigkill":
    case "replica-sigterm": {
      const signal = fault.kind === "replica-sigkill" ? "SIGKILL" : "SIGTERM";
      const r = pickFrom(sharded);
      return `${r.name} ${signal}, ${await kill(r, signal, "sharded")}`;
    }
    case "coordinator-kill": {
      const r = (await ctx.leaderOf("coordinator", "sharded")) ?? pickFrom(sharded);
      return `${r.name} (coordinator) SIGKILL, ${await kill(r, "SIGKILL", "sharded")}`;
    }
    case "leader-kill": {
      const r = (await ctx.leaderOf("", "leader")) ?? pickFrom(replicas.live("leader"));
      return `${r.name} (leader) SIGKILL, ${await kill(r, "SIGKILL", "leader")}`;
    }
    case "scale-up": {
      const r = await ctx.start("sharded");
      return `scaled up: ${r.name} started (${replicas.live("sharded").length} replicas)`;
    }
    case "scale-down": {
      const r = pickFrom(sharded);
      await replicas.stop(r, "SIGTERM");
      return `scaled down: ${r.name} SIGTERM (${replicas.live("sharded").length} replicas)`;
    }
    default:
      throw new Error(`soak: no such fault kind ${fault.kind}`);
  }
}
