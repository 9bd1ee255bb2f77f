import { strict as assert } from "node:assert";
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { CapturingLogger, TestMetrics } from "@tessera/core/testing";
import { eventually, FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { AlreadyExistsError, ConflictError } from "@tessera/client";
import {
  ConfigMapAssignmentStore,
  MemberFencedError,
  RING_LABEL,
  RingCoordinator,
  ShardMember,
} from "../../src/index.js";
import { advanceAssignment, AssignmentFormatError, emptyAssignment, isSettled } from "../../src/ranges.js";

const NS = "ring";

describe("ring coordination objects on the real control plane", function () {
  this.timeout(120_000);
  const env = useControlPlane();

  before(async () => {
    await env.cp.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  });

  describe("ConfigMapAssignmentStore", () => {
    it("publishes, reads back and replaces the assignment whole, refusing a stale writer", async () => {
      const store = new ConfigMapAssignmentStore({
        kubeConfig: env.cp.kubeConfig,
        namespace: NS,
        ring: "r1",
      });
      assert.equal(await store.read(), undefined);
      const e1 = advanceAssignment(emptyAssignment(256), {
        members: ["a", "b"],
        acknowledged: () => undefined,
      })!;
      const v1 = await store.create(e1);
      await assert.rejects(store.create(e1), AlreadyExistsError);

      const read = (await store.read())!;
      assert.equal(read.version, v1);
      assert.deepEqual(read.assignment.owners, e1.owners);
      assert.equal(read.assignment.epoch, 1);

      const e2 = advanceAssignment(e1, { members: ["a", "b", "c"], acknowledged: () => 1 })!;
      const v2 = await store.replace(e2, v1);
      const e2b = advanceAssignment(e1, { members: ["a"], acknowledged: () => 1 })!;
      await assert.rejects(store.replace(e2b, v1), (e: unknown) => {
        assert.ok(e instanceof ConflictError);
        assert.match(e.message, /^update configmaps ring\/r1-assignment: 409 Conflict/);
        assert.equal(e.verb, "update");
        return true;
      });
      const now = (await store.read())!;
      assert.equal(now.version, v2);
      assert.equal(now.assignment.epoch, 2);
      assert.deepEqual(now.assignment.releasing, e2.releasing);

      const cm = await env.cp.kubeConfig
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ name: "r1-assignment", namespace: NS });
      assert.equal(cm.metadata?.labels?.[RING_LABEL], "r1");
    });

    it("of two coordinators writing from the same read, exactly one wins", async () => {
      const store = new ConfigMapAssignmentStore({
        kubeConfig: env.cp.kubeConfig,
        namespace: NS,
        ring: "r2",
      });
      const e1 = advanceAssignment(emptyAssignment(16), { members: ["a"], acknowledged: () => undefined })!;
      const v1 = await store.create(e1);
      const left = advanceAssignment(e1, { members: ["a", "b"], acknowledged: () => 1 })!;
      const right = advanceAssignment(e1, { members: ["a", "c"], acknowledged: () => 1 })!;
      const results = await Promise.allSettled([store.replace(left, v1), store.replace(right, v1)]);
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      assert.ok(loser.reason instanceof ConflictError);
    });

    it("reports a damaged assignment with the resource named", async () => {
      const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: "r3-assignment" }, data: { epoch: "1", slotCount: "7" } },
      });
      const store = new ConfigMapAssignmentStore({
        kubeConfig: env.cp.kubeConfig,
        namespace: NS,
        ring: "r3",
      });
      await assert.rejects(store.read(), (e: unknown) => {
        assert.ok(e instanceof AssignmentFormatError);
        assert.match(
          e.message,
          /ConfigMap ring\/r3-assignment does not hold a valid shard assignment: slotCount/,
        );
        return true;
      });
    });
  });

  describe("a ring of replicas (member + coordinator each) through joins, a graceful exit and a crash", () => {
    // Short durations keep the suite quick; the invariants do not depend on them.
    const durations = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
    const ring = "web";
    interface Replica {
      id: string;
      proxy: FaultProxy;
      member: ShardMember;
      /** Aborting it makes the member leave the ring. */
      leave: AbortController;
      membership: Promise<void>;
      stop: AbortController;
      coordinator: RingCoordinator;
      coordinating: Promise<void>;
      metrics: TestMetrics;
      logger: CapturingLogger;
    }
    const replicas = new Map<string, Replica>();
    const violations: string[] = [];
    let sampler: ReturnType<typeof setInterval> | undefined;

    async function startReplica(id: string): Promise<Replica> {
      const proxy = new FaultProxy(env.cp.apiserverPort);
      await proxy.start();
      const kubeConfig = kubeConfigVia(env.cp.kubeConfig, proxy.url);
      const metrics = new TestMetrics();
      const logger = new CapturingLogger();
      const member = new ShardMember({
        logger,
        kubeConfig,
        namespace: NS,
        ring,
        identity: id,
        pollIntervalMs: 200,
        ...durations,
      });
      const coordinator = new RingCoordinator({
        kubeConfig,
        namespace: NS,
        ring,
        identity: id,
        pollIntervalMs: 200,
        expiryMarginMs: 1_000,
        election: durations,
        meter: metrics.meter,
        logger,
      });
      const leave = new AbortController();
      const membership = member.run(leave.signal);
      if (!(await member.joined())) await membership; // rejects with why it could not join
      const stop = new AbortController();
      const replica = {
        id,
        proxy,
        member,
        leave,
        membership,
        stop,
        coordinator,
        coordinating: coordinator.run(stop.signal),
        metrics,
        logger,
      };
      replicas.set(id, replica);
      return replica;
    }

    /** Waits until the published assignment is settled over exactly `ids` and each has applied it. */
    async function settledOver(ids: string[]): Promise<void> {
      const store = new ConfigMapAssignmentStore({ kubeConfig: env.cp.kubeConfig, namespace: NS, ring });
      const deadline = Date.now() + 60_000;
      let last = "";
      while (Date.now() < deadline) {
        const read = await store.read();
        if (read && isSettled(read.assignment)) {
          const owners = new Set(read.assignment.owners);
          const counts = ids.map((id) => replicas.get(id)!.member.activeSlots.size);
          const applied = ids.every((id) => replicas.get(id)!.member.epoch === read.assignment.epoch);
          last = `epoch ${read.assignment.epoch}, owners ${[...owners].join(",")}, counts ${counts.join(",")}`;
          if (
            applied &&
            owners.size === ids.length &&
            ids.every((id) => owners.has(id)) &&
            counts.every((c) => c === Math.floor(256 / ids.length) || c === Math.ceil(256 / ids.length)) &&
            counts.reduce((a, b) => a + b, 0) === 256
          ) {
            return;
          }
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail(`the ring did not settle over ${ids.join(",")}: ${last}`);
    }

    before(() => {
      sampler = setInterval(() => {
        const holder = new Map<number, string>();
        for (const r of replicas.values()) {
          for (const s of r.member.activeSlots) {
            const other = holder.get(s);
            if (other) violations.push(`slot ${s} active on ${other} and ${r.id}`);
            holder.set(s, r.id);
          }
        }
      }, 10);
    });

    after(async () => {
      clearInterval(sampler);
      for (const r of replicas.values()) r.stop.abort();
      await Promise.all([...replicas.values()].map((r) => r.coordinating));
      for (const r of replicas.values()) await r.proxy.stop();
    });

    it("gives a lone member every slot", async () => {
      await startReplica("pod-a");
      await settledOver(["pod-a"]);
    });

    it("rebalances when two members join, never with a slot active on two members", async () => {
      await startReplica("pod-b");
      await startReplica("pod-c");
      await settledOver(["pod-a", "pod-b", "pod-c"]);
      assert.deepEqual(violations, []);
      let moved = 0;
      for (const r of replicas.values()) moved += await r.metrics.sum("tessera_sharding_slots_moved");
      assert.ok(moved >= 170, `the coordinator counted ${moved} moved slots; pod-a gave away at least 170`);
      // Each replica has made dozens of requests by now; they share a few connections.
      for (const r of replicas.values()) {
        assert.ok(r.proxy.stats.connections <= 8, `${r.id} opened ${r.proxy.stats.connections} connections`);
      }
    });

    it("moves a gracefully stopping member's slots, after it let go of them", async () => {
      const b = replicas.get("pod-b")!;
      b.stop.abort();
      await b.coordinating;
      b.leave.abort();
      await b.membership;
      assert.equal(b.member.activeSlots.size, 0);
      const leases = env.cp.kubeConfig.makeApiClient(CoordinationV1Api);
      const read = () =>
        leases.readNamespacedLease({ name: "web-pod-b", namespace: NS }).then(
          (lease) => lease,
          () => undefined, // 404: deleted
        );
      const lease = await read();
      assert.ok(
        lease === undefined || lease.spec?.holderIdentity === "",
        "the member Lease was handed back (or already deleted), not left to expire",
      );
      await settledOver(["pod-a", "pod-c"]);
      // Every replica lists the ring's Leases; one left behind would cost each listing its bytes for good.
      await eventually(
        "the coordinator deleted the Lease handed back",
        async () => (await read()) === undefined,
      );
      replicas.delete("pod-b");
      await b.proxy.stop();
      assert.deepEqual(violations, []);
    });

    it("refuses a hand-edited, corrupted assignment: logged with the ConfigMap named, members keep their slots, nothing crashes; repaired, the ring goes on", async () => {
      const ids = [...replicas.keys()];
      const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
      const name = `${ring}-assignment`;
      const good = await core.readNamespacedConfigMap({ name, namespace: NS });
      const before = new Map(ids.map((id) => [id, new Set(replicas.get(id)!.member.activeSlots)]));
      // An epoch that is not a plain decimal: read as a number it could move every member backwards.
      await core.replaceNamespacedConfigMap({
        name,
        namespace: NS,
        body: { ...good, data: { ...good.data, epoch: "0x10" } },
      });
      const refused = (message: RegExp) =>
        [...replicas.values()].every((r) =>
          r.logger
            .matching(message, "warn")
            .some((l) => JSON.stringify(l.fields ?? {}).includes(`ConfigMap ${NS}/${name}`)),
        );
      await eventually("every member refused it, naming the ConfigMap", () =>
        refused(/could not apply the assignment/),
      );
      const coordinator = [...replicas.values()].find((r) => r.coordinator.isLeader)!;
      await eventually("the coordinator refused it, naming the ConfigMap", () =>
        coordinator.logger
          .matching(/coordination step failed/, "warn")
          .some((l) => JSON.stringify(l.fields ?? {}).includes(`ConfigMap ${NS}/${name}`)),
      );
      // A few polls later: every member still works on exactly its last good slots, and nobody stopped.
      await new Promise((r) => setTimeout(r, 1_000));
      for (const id of ids) {
        assert.deepEqual(new Set(replicas.get(id)!.member.activeSlots), before.get(id), `${id}'s slots`);
        assert.equal(replicas.get(id)!.member.fence.aborted, false, `${id} is still a member`);
      }
      const settled = await Promise.race([
        Promise.all([...replicas.values()].map((r) => r.coordinating)).then(() => "a coordinator stopped"),
        new Promise((r) => setTimeout(() => r("running"), 100)),
      ]);
      assert.equal(settled, "running");
      // The coordinator did not overwrite the hand edit: a person decides what it should be.
      const now = await core.readNamespacedConfigMap({ name, namespace: NS });
      assert.equal(now.data?.["epoch"], "0x10");
      await core.replaceNamespacedConfigMap({ name, namespace: NS, body: { ...now, data: good.data } });
      await settledOver(ids);
      assert.deepEqual(violations, []);
    });

    it("fences the coordinator's replica when it is cut off; the other takes over from the published state", async () => {
      const leader = [...replicas.values()].find((r) => r.coordinator.isLeader);
      assert.ok(leader, "one replica coordinates");
      const survivor = [...replicas.values()].find((r) => r !== leader)!;
      leader.proxy.refuse(true);
      leader.proxy.cutAll();
      await new Promise<void>((resolve) => {
        if (leader.member.fence.aborted) resolve();
        else leader.member.fence.addEventListener("abort", () => resolve(), { once: true });
      });
      assert.ok((leader.member.fence.reason as MemberFencedError).reason === "renewDeadlineExceeded");
      assert.equal(leader.member.activeSlots.size, 0);
      await settledOver([survivor.id]);
      assert.ok(survivor.coordinator.isLeader, `${survivor.id} coordinates now`);
      // The fenced member's Lease expired; the new coordinator deletes it (it counts as gone).
      const leases = env.cp.kubeConfig.makeApiClient(CoordinationV1Api);
      await eventually("the expired member Lease was deleted", async () => {
        const list = await leases.listNamespacedLease({ namespace: NS, labelSelector: `${RING_LABEL}=web` });
        return !list.items.some((l) => l.metadata?.name === `web-${leader.id}`);
      });
      assert.deepEqual(violations, []);
    });
  });
});
