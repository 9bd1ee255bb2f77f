import { strict as assert } from "node:assert";
import { CoreV1Api } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import {
  advanceAssignment,
  AssignmentConflictError,
  AssignmentFormatError,
  ConfigMapAssignmentStore,
  emptyAssignment,
  RING_LABEL,
} from "../../src/index.js";

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
      await assert.rejects(store.create(e1), AssignmentConflictError);

      const read = (await store.read())!;
      assert.equal(read.version, v1);
      assert.deepEqual(read.assignment.owners, e1.owners);
      assert.equal(read.assignment.epoch, 1);

      const e2 = advanceAssignment(e1, { members: ["a", "b", "c"], acknowledged: () => 1 })!;
      const v2 = await store.replace(e2, v1);
      const e2b = advanceAssignment(e1, { members: ["a"], acknowledged: () => 1 })!;
      await assert.rejects(store.replace(e2b, v1), (e: unknown) => {
        assert.ok(e instanceof AssignmentConflictError);
        assert.match(e.message, /^cannot update ConfigMap ring\/r1-assignment: HTTP 409/);
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
      assert.ok(loser.reason instanceof AssignmentConflictError);
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
});
