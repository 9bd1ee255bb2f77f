import { strict as assert } from "node:assert";
import { CoordinationV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { TestMetrics } from "@tessera/core/testing";
import { useControlPlane } from "@tessera/testenv";
import { AlreadyExistsError, ApiError, ConflictError, isForbidden, isUnauthorized } from "@tessera/client";
import { LeaderElector, LeaseLock, type LeaderElectionRecord } from "../../src/index.js";
import { waitFor } from "./live-election.js";

const NAMESPACE = "lease-lock";

function record(holder: string, transitions = 0): LeaderElectionRecord {
  const now = new Date();
  return {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitions,
  };
}

describe("LeaseLock on a real control plane", function () {
  const env = useControlPlane();

  before(async () => {
    await env.cp.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  const lock = (name: string, identity: string, kubeConfig = env.cp.kubeConfig) =>
    new LeaseLock({ kubeConfig, namespace: NAMESPACE, name, identity, labels: { app: "test" } });

  it("creates, reads back and updates a Lease, microsecond times included", async () => {
    const a = lock("round-trip", "a");
    assert.equal(await a.get(), undefined, "no Lease yet");
    const written = record("a");
    written.renewTime = new Date("2030-01-02T03:04:05.678Z");
    const v1 = await a.create(written);
    const read = await a.get();
    assert.equal(read?.version, v1);
    assert.deepEqual(read?.record, written);

    const lease = await env.cp.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: "round-trip", namespace: NAMESPACE });
    assert.equal(lease.metadata?.labels?.app, "test");
    assert.equal(String(lease.spec?.renewTime), "2030-01-02T03:04:05.678000Z");

    const v2 = await a.update(record("a", 1), v1);
    assert.notEqual(v2, v1);
    assert.equal((await a.get())?.record.leaseTransitions, 1);
  });

  it("refuses a write quoting a stale resourceVersion with a conflict (409)", async () => {
    const a = lock("race", "a");
    const b = lock("race", "b");
    const v1 = await a.create(record("a"));
    await a.update(record("a"), v1);
    await assert.rejects(
      b.update(record("b", 1), v1),
      (err: unknown) =>
        err instanceof ConflictError &&
        err.code === 409 &&
        err.verb === "update" &&
        /^update leases.coordination.k8s.io lease-lock\/race: 409 Conflict/.test(err.message),
    );
    await assert.rejects(
      b.create(record("b")),
      (err: unknown) => err instanceof AlreadyExistsError && err.verb === "create",
    );
    assert.equal((await b.get())?.record.holderIdentity, "a");
  });

  it("keeps labels and annotations that others put on the Lease", async () => {
    const a = lock("foreign", "a");
    const v1 = await a.create(record("a"));
    const api = env.cp.kubeConfig.makeApiClient(CoordinationV1Api);
    const lease = await api.readNamespacedLease({ name: "foreign", namespace: NAMESPACE });
    lease.metadata!.annotations = { "example.com/owner": "team-x" };
    await api.replaceNamespacedLease({ name: "foreign", namespace: NAMESPACE, body: lease });
    const current = await a.get();
    assert.notEqual(current?.version, v1);
    await a.update(record("a", 0), current!.version);
    const after = await api.readNamespacedLease({ name: "foreign", namespace: NAMESPACE });
    assert.equal(after.metadata?.annotations?.["example.com/owner"], "team-x");
    assert.equal(after.metadata?.labels?.app, "test");
  });

  it("counts its requests in client-go's request metrics on the meter it is given", async () => {
    const metrics = new TestMetrics();
    const l = new LeaseLock({
      kubeConfig: env.cp.kubeConfig,
      namespace: NAMESPACE,
      name: "metered",
      identity: "a",
      meter: metrics.meter,
    });
    assert.equal(await l.get(), undefined);
    const v1 = await l.create(record("a"));
    await l.update(record("a"), v1);
    const host = new URL(env.cp.kubeConfig.getCurrentCluster()!.server).host;
    assert.equal(await metrics.value("rest_client_requests_total", { code: "404", method: "GET", host }), 1);
    assert.equal(await metrics.value("rest_client_requests_total", { code: "201", method: "POST", host }), 1);
    assert.equal(await metrics.value("rest_client_requests_total", { code: "200", method: "PUT", host }), 1);
    assert.equal(await metrics.sum("rest_client_request_duration_seconds", { host }), 3);
    await metrics.close();
  });

  describe("without RBAC for leases", () => {
    let unprivileged: KubeConfig;
    let getOnly: KubeConfig;

    /** A KubeConfig authenticating as a fresh ServiceAccount, with a token from the TokenRequest API. */
    async function serviceAccountConfig(name: string): Promise<KubeConfig> {
      const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name } } });
      const token = await core.createNamespacedServiceAccountToken({
        name,
        namespace: NAMESPACE,
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      });
      const admin = env.cp.kubeConfig;
      const cluster = admin.getCurrentCluster()!;
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [cluster],
        users: [{ name, token: token.status!.token }],
        contexts: [{ name, cluster: cluster.name, user: name }],
        currentContext: name,
      });
      return kc;
    }

    before(async () => {
      unprivileged = await serviceAccountConfig("no-rbac");
      getOnly = await serviceAccountConfig("get-only");
      const rbac = env.cp.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
      await rbac.createNamespacedRole({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "lease-reader" },
          rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "lease-reader" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lease-reader" },
          subjects: [{ kind: "ServiceAccount", name: "get-only", namespace: NAMESPACE }],
        },
      });
    });

    it("a read fails with an error naming the verb and the Lease (403)", async () => {
      await assert.rejects(lock("guarded", "x", unprivileged).get(), (err: unknown) => {
        assert.ok(err instanceof ApiError && !(err instanceof ConflictError));
        assert.equal(err.verb, "get");
        assert.equal(
          `${err.resource} ${err.namespace}/${err.objectName}`,
          "leases.coordination.k8s.io lease-lock/guarded",
        );
        assert.equal(err.code, 403);
        assert.equal(isForbidden(err) || isUnauthorized(err), true);
        assert.match(err.message, /^get leases.coordination.k8s.io lease-lock\/guarded: 403 Forbidden: /);
        assert.match(err.message, /system:serviceaccount:lease-lock:no-rbac/);
        return true;
      });
    });

    it("with get but not create, the create fails naming create", async () => {
      const l = lock("guarded", "x", getOnly);
      assert.equal(await l.get(), undefined);
      await assert.rejects(
        l.create(record("x")),
        (err: unknown) =>
          err instanceof ApiError &&
          err.verb === "create" &&
          err.code === 403 &&
          /^create leases.coordination.k8s.io lease-lock\/guarded: 403 Forbidden: .*cannot create resource "leases"/.test(
            err.message,
          ),
      );
    });

    it("an elector never leads, keeps the error and reports unhealthy", async () => {
      const elector = new LeaderElector({
        leaseDurationMs: 2000,
        renewDeadlineMs: 1500,
        retryPeriodMs: 300,
        lock: lock("guarded", "x", getOnly),
        callbacks: { onStartedLeading: () => assert.fail("led without permission") },
      });
      const stop = new AbortController();
      const run = elector.run(stop.signal);
      const health = await waitFor(
        () => {
          const h = elector.health();
          return !h.healthy && h;
        },
        10_000,
        "the elector to report unhealthy",
      );
      assert.match(
        health.reason ?? "",
        /^create leases.coordination.k8s.io lease-lock\/guarded: 403 Forbidden/,
      );
      assert.equal(elector.lastError?.verb, "create");
      stop.abort();
      assert.deepEqual(await run, { led: false, reason: "cancelled" });
    });
  });
});
