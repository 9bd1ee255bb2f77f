import { strict as assert } from "node:assert";
import type { V1Deployment, V1DeploymentStatus } from "@kubernetes/client-node";
import { Deployments } from "@tessera/runtime";
import { FakeClient, reconcileOnce, serverErrors } from "@tessera/runtime/testing";
import {
  CONFIG_HASH_ANNOTATION,
  FINALIZER,
  WebAppReconciler,
  secretDataChanged,
} from "../src/controllers/webapp.js";
import { WebApps, type WebApp } from "../src/generated/webapp.js";

// The rollout conditions, one reconcile at a time on the fake client: the test
// plays the Deployment controller by writing the Deployment's status, so each
// step of a rollout (and a stuck one) is a few milliseconds, with no Pods. The
// control-plane test (webapp.test.ts) runs the same rollouts for real.
const request = { name: "shop", namespace: "default" };

function webapp(config: Record<string, string>): WebApp {
  return {
    apiVersion: "apps.example.com/v1alpha1",
    kind: "WebApp",
    metadata: { ...request, finalizers: [FINALIZER] },
    spec: { image: "nginx:1.27", replicas: 2, config },
  };
}

/** Writes the Deployment's status as its controller would. */
async function deploymentReports(client: FakeClient, status: V1DeploymentStatus): Promise<V1Deployment> {
  const live = client.peek(Deployments, request)!;
  return client.updateStatus(Deployments, { ...live, status });
}

const reconcile = (client: FakeClient) => reconcileOnce(WebAppReconciler, request, { client });
// Conditions are kept sorted by type.
const summary = (conditions: { type: string; status: string; reason: string }[] | undefined) =>
  conditions?.map((c) => `${c.type}=${c.status} ${c.reason}`);

describe("WebAppReconciler, one reconcile on the fake client", function () {
  it("has its finalizer added first (by the runtime, one JSON patch), then reconciles in the same pass", async () => {
    const app = { ...webapp({}), metadata: { ...request } };
    const { writes, error } = await reconcileOnce(WebAppReconciler, request, {
      objects: [app],
      resources: [WebApps],
    });
    assert.equal(error, undefined);
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.kind}`),
      ["patch WebApp", "apply ConfigMap", "apply Deployment", "apply Service", "applyStatus WebApp"],
    );
    assert.deepEqual(writes[0]!.object.metadata?.finalizers, [FINALIZER]);
  });

  it("reports a rollout from its start to complete, then rolling again on a config change", async () => {
    const client = new FakeClient({ resources: [WebApps], objects: [webapp({ GREETING: "hello" })] });

    const started = await reconcile(client);
    assert.equal(started.error, undefined);
    assert.deepEqual(
      started.writes.map((w) => `${w.verb} ${w.kind}`),
      ["apply ConfigMap", "apply Deployment", "apply Service", "applyStatus WebApp"],
    );
    assert.deepEqual(summary(started.conditions), [
      "Available=False Deploying",
      "Degraded=False AsExpected",
      "Progressing=True RollingOut",
    ]);
    assert.deepEqual(
      started.events.map((e) => `${e.type} ${e.reason}`),
      ["Normal Deploying", "Normal RollingOut", "Normal AsExpected"],
    );

    const deployment = await deploymentReports(client, {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
      ],
    });
    const complete = await reconcile(client);
    assert.deepEqual(summary(complete.conditions), [
      "Available=True MinimumReplicasAvailable",
      "Degraded=False AsExpected",
      "Progressing=False RolloutComplete",
    ]);
    // An Event for each condition that changed, none for the one that did not.
    assert.deepEqual(
      complete.events.map((e) => e.reason),
      ["MinimumReplicasAvailable", "RolloutComplete"],
    );
    assert.equal(client.peek(WebApps, request)?.status?.readyReplicas, 2);

    // A config change rolls the Pods (a new template hash), so the Deployment's
    // generation moves past what its controller has seen: not Available until it catches up.
    const live = client.peek(WebApps, request)!;
    await client.update(WebApps, { ...live, spec: { ...live.spec, config: { GREETING: "hi" } } });
    const rolling = await reconcile(client);
    const rolled = client.peek(Deployments, request)!;
    assert.equal(rolled.metadata?.generation, 2);
    assert.notEqual(
      rolled.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION],
      deployment.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION],
    );
    assert.deepEqual(summary(rolling.conditions), [
      "Available=False MinimumReplicasAvailable",
      "Degraded=False AsExpected",
      "Progressing=True RollingOut",
    ]);
    assert.ok(rolling.conditions?.every((c) => c.observedGeneration === 2));
  });

  it("is Degraded, with a Warning, when the Deployment passes its progress deadline", async () => {
    const client = new FakeClient({ resources: [WebApps], objects: [webapp({})] });
    await reconcile(client);
    await deploymentReports(client, {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 1,
      availableReplicas: 1,
      conditions: [
        { type: "Available", status: "False", reason: "MinimumReplicasUnavailable" },
        {
          type: "Progressing",
          status: "False",
          reason: "ProgressDeadlineExceeded",
          message: 'ReplicaSet "shop-1" has timed out progressing.',
        },
      ],
    });
    const stuck = await reconcile(client);
    assert.deepEqual(summary(stuck.conditions), [
      "Available=False MinimumReplicasUnavailable",
      "Degraded=True ProgressDeadlineExceeded",
      "Progressing=False ProgressDeadlineExceeded",
    ]);
    const degraded = stuck.conditions?.find((c) => c.type === "Degraded");
    assert.equal(degraded?.message, 'ReplicaSet "shop-1" has timed out progressing.');
    // Available stayed False (only its reason changed): no Event for it.
    assert.deepEqual(
      stuck.events.map((e) => `${e.type} ${e.reason}`),
      ["Normal ProgressDeadlineExceeded", "Warning ProgressDeadlineExceeded"],
    );
  });

  it("keeps its finalizer while the Deployment cannot be deleted, and tears down on the retry", async () => {
    const client = new FakeClient({ resources: [WebApps], objects: [webapp({})] });
    await reconcile(client);
    await client.delete(WebApps, request); // marked: the finalizer holds it
    const refused = client.intercept({ verb: "delete", resource: Deployments, times: 1 }, (call) => {
      throw serverErrors.conflict(call.context, Deployments, call.name ?? "");
    });

    const failed = await reconcile(client);
    assert.equal(refused.calls, 1);
    assert.ok(failed.error, "the error reaches the controller, which retries");
    assert.deepEqual(client.peek(WebApps, request)?.metadata?.finalizers, [FINALIZER]);

    // The retry deletes the Deployment and waits for it to go (the fake deletes it at once).
    const deleting = await reconcile(client);
    assert.deepEqual(deleting.result, { requeueAfterMs: 5_000 });
    assert.deepEqual(
      deleting.events.map((e) => e.reason),
      ["TearingDown"],
    );
    assert.equal(client.peek(Deployments, request), undefined);
    const done = await reconcile(client);
    assert.equal(done.error, undefined);
    assert.equal(client.peek(WebApps, request), undefined, "the finalizer gone, so is the WebApp");
  });

  it("wakes for a Secret's data, not its labels, annotations or a resync", () => {
    const secret = { metadata: { name: "shop-secrets", namespace: "default" }, data: { TOKEN: "b25l" } };
    const relabelled = { ...secret, metadata: { ...secret.metadata, labels: { team: "shop" } } };
    assert.equal(secretDataChanged.update?.(secret, relabelled), false);
    assert.equal(secretDataChanged.update?.(secret, secret), false);
    assert.equal(secretDataChanged.update?.(secret, { ...secret, data: { TOKEN: "dHdv" } }), true);
  });
});
