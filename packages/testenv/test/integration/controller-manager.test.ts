import { strict as assert } from "node:assert";
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  type V1ConfigMap,
  type V1OwnerReference,
} from "@kubernetes/client-node";
import { eventually, markPodsReady, useControlPlane } from "../../src/index.js";

const isNotFound = (e: unknown) => (e as { code?: number }).code === 404;

async function gone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (e) {
    if (isNotFound(e)) return true;
    throw e;
  }
}

describe("ControlPlane with kube-controller-manager", function () {
  const env = useControlPlane({ controllerManager: true });
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let ns = 0;

  before(() => {
    core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    apps = env.cp.kubeConfig.makeApiClient(AppsV1Api);
  });

  async function namespace(): Promise<string> {
    const name = `kcm-${++ns}`;
    await core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  /** An owner ConfigMap and a dependent that names it in ownerReferences. */
  async function ownerAndDependent(namespace: string, dependentFinalizers: string[] = []) {
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "owner" } } });
    const ref: V1OwnerReference = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "owner",
      uid: owner.metadata!.uid!,
      blockOwnerDeletion: true,
    };
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "dependent", ownerReferences: [ref], finalizers: dependentFinalizers } },
    });
    return {
      owner: () => core.readNamespacedConfigMap({ namespace, name: "owner" }),
      dependent: () => core.readNamespacedConfigMap({ namespace, name: "dependent" }),
    };
  }

  it("gives a new namespace its default ServiceAccount, and ServiceAccount admission is on", async () => {
    const n = await namespace();
    await eventually(`namespace ${n} has its default ServiceAccount`, () =>
      gone(() => core.readNamespacedServiceAccount({ namespace: n, name: "default" })).then((g) => !g),
    );
    const pod = await core.createNamespacedPod({
      namespace: n,
      body: { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "busybox" }] } },
    });
    // The admission plugin fills these in; with it off they stay empty.
    assert.equal(pod.spec?.serviceAccountName, "default");
    assert.ok(
      pod.spec?.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)),
      "the ServiceAccount admission plugin mounted a projected token volume",
    );
  });

  it("background deletion of an owner deletes its dependents", async () => {
    const n = await namespace();
    const { dependent } = await ownerAndDependent(n);
    await core.deleteNamespacedConfigMap({ namespace: n, name: "owner", propagationPolicy: "Background" });
    await eventually("the garbage collector deletes the dependent", () => gone(dependent));
  });

  it("foreground deletion keeps the owner until its blocking dependents are gone", async () => {
    const n = await namespace();
    // A finalizer of the test's own holds the dependent, so the order is observable.
    const { owner, dependent } = await ownerAndDependent(n, ["tessera.dev/test-hold"]);
    await core.deleteNamespacedConfigMap({ namespace: n, name: "owner", propagationPolicy: "Foreground" });
    await eventually("the garbage collector marks the dependent deleted", async () => {
      return !!(await dependent()).metadata?.deletionTimestamp;
    });
    const held: V1ConfigMap = await owner();
    assert.ok(held.metadata?.deletionTimestamp, "the owner is being deleted");
    assert.ok(
      held.metadata?.finalizers?.includes("foregroundDeletion"),
      "the owner waits in foreground deletion",
    );
    await core.patchNamespacedConfigMap({
      namespace: n,
      name: "dependent",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await eventually("the dependent is gone", () => gone(dependent));
    await eventually("then the owner is gone", () => gone(owner));
  });

  it("orphan deletion leaves the dependents and removes their owner reference", async () => {
    const n = await namespace();
    const { owner, dependent } = await ownerAndDependent(n);
    await core.deleteNamespacedConfigMap({ namespace: n, name: "owner", propagationPolicy: "Orphan" });
    await eventually("the owner is gone", () => gone(owner));
    await eventually("the dependent lost its owner reference", async () => {
      return ((await dependent()).metadata?.ownerReferences ?? []).length === 0;
    });
  });

  it("deleting a namespace removes it and everything in it", async () => {
    const n = await namespace();
    await core.createNamespacedConfigMap({ namespace: n, body: { metadata: { name: "cm" } } });
    await core.createNamespacedSecret({
      namespace: n,
      body: { metadata: { name: "s" }, stringData: { k: "v" } },
    });
    await apps.createNamespacedDeployment({ namespace: n, body: deployment("web", 1) });
    await core.deleteNamespace({ name: n });
    await eventually(`namespace ${n} is removed`, () => gone(() => core.readNamespace({ name: n })));
  });

  it("a Deployment creates a ReplicaSet and Pods, and becomes Available once the Pods are marked ready", async () => {
    const n = await namespace();
    await apps.createNamespacedDeployment({ namespace: n, body: deployment("web", 2) });
    await eventually("a ReplicaSet owned by the Deployment", async () => {
      const rs = await apps.listNamespacedReplicaSet({ namespace: n });
      return rs.items.some((r) => r.metadata?.ownerReferences?.some((o) => o.kind === "Deployment"));
    });
    await eventually(
      "two Pods",
      async () => (await core.listNamespacedPod({ namespace: n })).items.length === 2,
    );
    const before = await apps.readNamespacedDeployment({ namespace: n, name: "web" });
    assert.notEqual(before.status?.availableReplicas, 2, "no Pod is ready before the kubelet helper runs");

    assert.equal((await markPodsReady(env.cp, n, { labelSelector: "app=web" })).length, 2);
    await eventually("the Deployment is Available with 2 ready replicas", async () => {
      const d = await apps.readNamespacedDeployment({ namespace: n, name: "web" });
      const available = d.status?.conditions?.find((c) => c.type === "Available");
      return (
        available?.status === "True" && d.status?.readyReplicas === 2 && d.status?.availableReplicas === 2
      );
    });
  });

  it("a Service with a selector gets its EndpointSlice", async () => {
    const n = await namespace();
    await core.createNamespacedService({
      namespace: n,
      body: { metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } },
    });
    const discovery = env.cp.kubeConfig.makeApiClient(DiscoveryV1Api);
    await eventually("an EndpointSlice managed by the endpointslice controller", async () => {
      const slices = await discovery.listNamespacedEndpointSlice({
        namespace: n,
        labelSelector: "kubernetes.io/service-name=web",
      });
      return slices.items.some(
        (s) =>
          s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] ===
          "endpointslice-controller.k8s.io",
      );
    });
  });

  it("a Job creates its Pod", async () => {
    const n = await namespace();
    const batch = env.cp.kubeConfig.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({
      namespace: n,
      body: {
        metadata: { name: "once" },
        spec: {
          template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
        },
      },
    });
    await eventually("the Job's Pod", async () => {
      const pods = await core.listNamespacedPod({ namespace: n, labelSelector: "job-name=once" });
      return pods.items.length === 1;
    });
  });

  it("restartControllerManager() restarts it, and its controllers catch up", async () => {
    const n = await namespace();
    const { dependent } = await ownerAndDependent(n);
    await env.cp.restartControllerManager();
    await core.deleteNamespacedConfigMap({ namespace: n, name: "owner" });
    await eventually("the restarted garbage collector deletes the dependent", () => gone(dependent));
  });
});

describe("ControlPlane without kube-controller-manager", function () {
  const env = useControlPlane();

  it("is the default: no ServiceAccount appears, and Pods are admitted without one", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    assert.equal(env.cp.withControllerManager, false);
    await assert.rejects(env.cp.restartControllerManager(), /controllerManager: true/);
    const pod = await core.createNamespacedPod({
      namespace: "default",
      body: { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "busybox" }] } },
    });
    assert.ok(!pod.spec?.volumes?.length, "no token volume without ServiceAccount admission");
    await assert.rejects(
      core.readNamespacedServiceAccount({ namespace: "default", name: "default" }),
      isNotFound,
    );
  });
});

function deployment(name: string, replicas: number) {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      },
    },
  };
}
