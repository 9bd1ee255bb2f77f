import { strict as assert } from "node:assert";
import { fileURLToPath } from "node:url";
import {
  ConfigMaps,
  Deployments,
  Events,
  Secrets,
  Services,
  ApiClient,
  findCondition,
  Manager,
  Tokens,
  type Client,
} from "@tessera/runtime";
import {
  eventually,
  markPodsReady,
  parsePrometheusText,
  useControlPlane,
  type ControlPlane,
} from "@tessera/testenv";
import {
  CONFIG_HASH_ANNOTATION,
  FINALIZER,
  SECRET_HASH_ANNOTATION,
  WebAppReconciler,
} from "../src/controllers/webapp.js";
import { WebApps, webappValidator, type WebApp } from "../src/generated/index.js";

// dist/test/ -> the project's deploy/base/crds, wherever mocha runs from.
const crdDir = fileURLToPath(new URL("../../deploy/base/crds", import.meta.url));
const namespace = "default";

/**
 * The API server's count of requests on `resource` (its main resource, not
 * status), by verb, from `apiserver_request_total`; watches and lists left
 * out (the informers' streams).
 */
async function requestsOn(cp: ControlPlane, resource: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const sample of parsePrometheusText(await cp.metrics()).get("apiserver_request_total")?.samples ??
    []) {
    const { verb, resource: r, subresource } = sample.labels;
    if (r !== resource || (subresource ?? "") !== "" || !verb || verb === "WATCH" || verb === "LIST")
      continue;
    counts[verb] = (counts[verb] ?? 0) + sample.value;
  }
  return counts;
}

/** What was requested between two counts, verbs that did not change left out. */
function since(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const verb of Object.keys(after).sort()) {
    const n = after[verb]! - (before[verb] ?? 0);
    if (n !== 0) out[verb] = n;
  }
  return out;
}

// A real etcd, kube-apiserver and kube-controller-manager (its Deployment and
// ReplicaSet controllers create the Pods; the test plays the kubelet with
// markPodsReady; its garbage collector removes what a WebApp owns), the
// generated CRD installed, and the operator running leader-elected in this
// process.
describe("WebAppReconciler", function () {
  const env = useControlPlane({ controllerManager: true, crds: [crdDir] });
  let client: ApiClient;
  before(() => {
    client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
  });

  const webapp = (name: string) => client.get(WebApps, { name, namespace });
  const condition = async (name: string, type: string) =>
    findCondition((await webapp(name))?.status?.conditions, type);
  const conditionIs = async (name: string, type: string, status: string, reason?: string) => {
    const c = await condition(name, type);
    return c?.status === status && (reason === undefined || c.reason === reason);
  };
  const eventReasons = async (name: string) =>
    (await client.list(Events, { namespace, fields: { "involvedObject.name": name } })).map((e) => e.reason);
  const podsOf = (name: string) => ({ labelSelector: `app.kubernetes.io/instance=${name}` });

  describe("with the operator running", function () {
    const stop = new AbortController();
    let running: Promise<void>;
    /** The operator's cache: what the teardown test polls, so that its reads are no API requests. */
    let cache: Client;
    before(async () => {
      const manager = await Manager.create({
        kubeConfig: env.cp.kubeConfig,
        config: {
          name: "webapp",
          namespace,
          mode: "leader",
          healthBindAddress: "0",
          metricsBindAddress: "0",
          logLevel: "warn",
        },
        env: {},
      });
      manager.register(WebAppReconciler);
      cache = manager.get(Tokens.Client);
      running = manager.run(stop.signal);
    });
    after(async () => {
      stop.abort();
      await running;
    });

    it("serves a WebApp with a ConfigMap, a Deployment and a Service, and reports the rollout", async () => {
      const before = await requestsOn(env.cp, "webapps");
      await client.create(WebApps, {
        metadata: { name: "shop", namespace },
        spec: { image: "registry.example.com/shop/web:1.4.2", replicas: 2, config: { GREETING: "hello" } },
      });
      await eventually(
        "the Deployment exists",
        async () => (await client.get(Deployments, { name: "shop", namespace })) !== undefined,
      );
      // The test's create, and the finalizer's add: one JSON patch, no GET, no PUT.
      const adding = since(await requestsOn(env.cp, "webapps"), before);
      console.log(`      adding the finalizer, requests on webapps: ${JSON.stringify(adding)}`);
      assert.deepEqual(adding, { PATCH: 1, POST: 1 });
      const deployment = (await client.get(Deployments, { name: "shop", namespace }))!;
      assert.equal(deployment.spec?.replicas, 2);
      const container = deployment.spec?.template.spec?.containers[0];
      assert.equal(container?.image, "registry.example.com/shop/web:1.4.2");
      assert.deepEqual(container?.envFrom, [{ configMapRef: { name: "shop" } }]);
      assert.equal(deployment.metadata?.ownerReferences?.[0]?.kind, "WebApp");
      assert.deepEqual((await client.get(ConfigMaps, { name: "shop", namespace }))?.data, {
        GREETING: "hello",
      });
      const service = await client.get(Services, { name: "shop", namespace });
      assert.deepEqual(service?.spec?.selector, deployment.spec?.selector.matchLabels);
      assert.equal(service?.spec?.ports?.[0]?.port, 80);
      assert.ok((await webapp("shop"))?.metadata?.finalizers?.includes(FINALIZER));

      // No kubelet: the Pods exist but none is ready.
      await eventually(
        "Progressing, not Available",
        async () =>
          (await conditionIs("shop", "Progressing", "True", "RollingOut")) &&
          (await conditionIs("shop", "Available", "False")),
      );

      await eventually("Available once the Pods are ready", async () => {
        await markPodsReady(env.cp, namespace, podsOf("shop"));
        return conditionIs("shop", "Available", "True");
      });
      await eventually(
        "the rollout complete, and not Degraded",
        async () =>
          (await conditionIs("shop", "Progressing", "False", "RolloutComplete")) &&
          (await conditionIs("shop", "Degraded", "False")),
      );
      const status = (await webapp("shop"))?.status;
      assert.equal(status?.readyReplicas, 2);
      assert.equal(status?.url, "http://shop.default.svc");
      assert.equal(status?.observedGeneration, (await webapp("shop"))?.metadata?.generation);
      await eventually("an Event says it became Available", async () =>
        (await eventReasons("shop")).includes("MinimumReplicasAvailable"),
      );
    });

    it("rolls the Pods out again when spec.config changes", async () => {
      const hashOf = async () =>
        (await client.get(Deployments, { name: "shop", namespace }))?.spec?.template.metadata?.annotations?.[
          CONFIG_HASH_ANNOTATION
        ];
      const before = await hashOf();
      await client.apply(
        WebApps,
        {
          metadata: { name: "shop", namespace },
          spec: { image: "registry.example.com/shop/web:1.4.2", replicas: 2, config: { GREETING: "hej" } },
        },
        { force: true }, // the create above owns spec.config as an update
      );
      await eventually("the Pod template's config hash changed", async () => (await hashOf()) !== before);
      assert.deepEqual((await client.get(ConfigMaps, { name: "shop", namespace }))?.data, {
        GREETING: "hej",
      });
      await eventually("the new Pods ready, the rollout complete at the new generation", async () => {
        await markPodsReady(env.cp, namespace, podsOf("shop"));
        const current = await webapp("shop");
        const progressing = findCondition(current?.status?.conditions, "Progressing");
        return (
          progressing?.reason === "RolloutComplete" &&
          progressing.observedGeneration === current?.metadata?.generation
        );
      });
    });

    it("takes the Secret spec.secretName names into the Pods, and rolls them when its data changes", async () => {
      const template = async () =>
        (await client.get(Deployments, { name: "shop", namespace }))?.spec?.template;
      await client.create(Secrets, {
        metadata: { name: "shop-secrets", namespace },
        stringData: { TOKEN: "one" },
      });
      await client.apply(
        WebApps,
        {
          metadata: { name: "shop", namespace },
          spec: {
            image: "registry.example.com/shop/web:1.4.2",
            replicas: 2,
            config: { GREETING: "hej" },
            secretName: "shop-secrets",
          },
        },
        { force: true },
      );
      await eventually("the Pods take the Secret's keys", async () =>
        Boolean(
          (await template())?.spec?.containers[0]?.envFrom?.some((e) => e.secretRef?.name === "shop-secrets"),
        ),
      );
      const before = (await template())?.metadata?.annotations?.[SECRET_HASH_ANNOTATION];
      assert.ok(before, "the Pod template carries the Secret's data hash");
      // The Secret's event maps to the WebApp through the index of WebApps by spec.secretName.
      await client.patch(
        Secrets,
        { name: "shop-secrets", namespace },
        { type: "merge", patch: { stringData: { TOKEN: "two" } } },
      );
      await eventually(
        "the Pod template's Secret hash changed",
        async () => (await template())?.metadata?.annotations?.[SECRET_HASH_ANNOTATION] !== before,
      );
      await eventually("the new Pods ready, the rollout complete", async () => {
        await markPodsReady(env.cp, namespace, podsOf("shop"));
        return (
          findCondition((await webapp("shop"))?.status?.conditions, "Progressing")?.reason ===
          "RolloutComplete"
        );
      });
    });

    it("is Degraded, with a Warning, when the rollout passes its deadline", async () => {
      await client.create(WebApps, {
        metadata: { name: "stuck", namespace },
        spec: { image: "registry.example.com/shop/web:broken", progressDeadlineSeconds: 1 },
      });
      // Its Pods never become ready: the Deployment controller gives up after a second.
      await eventually("Degraded", () =>
        conditionIs("stuck", "Degraded", "True", "ProgressDeadlineExceeded"),
      );
      assert.ok(await conditionIs("stuck", "Progressing", "False", "ProgressDeadlineExceeded"));
      assert.ok(await conditionIs("stuck", "Available", "False"));
      await eventually("a Warning Event", async () => {
        const events = await client.list(Events, { namespace, fields: { "involvedObject.name": "stuck" } });
        return events.some((e) => e.type === "Warning" && e.reason === "ProgressDeadlineExceeded");
      });
    });

    it("tears down in order: the Deployment and its Pods before the WebApp, the rest with it", async () => {
      const before = {
        webapps: await requestsOn(env.cp, "webapps"),
        deployments: await requestsOn(env.cp, "deployments"),
      };
      await client.delete(WebApps, { name: "shop", namespace });
      const held: WebApp[] = [];
      let deploymentGoneFirst = false;
      // Read from the operator's cache: the test's polls are no requests on webapps or deployments.
      await eventually("the WebApp is gone", async () => {
        const current = await cache.get(WebApps, { name: "shop", namespace });
        if (current) {
          held.push(current);
          return false;
        }
        // The finalizer let it go only after the Deployment was gone.
        deploymentGoneFirst = (await cache.get(Deployments, { name: "shop", namespace })) === undefined;
        return true;
      });
      const teardown = {
        webapps: since(await requestsOn(env.cp, "webapps"), before.webapps),
        deployments: since(await requestsOn(env.cp, "deployments"), before.deployments),
      };
      console.log(`      the teardown, requests on webapps and deployments: ${JSON.stringify(teardown)}`);
      assert.ok(deploymentGoneFirst, "the Deployment went before the WebApp");
      assert.equal(await client.get(Deployments, { name: "shop", namespace }), undefined);
      assert.ok(
        held.some((w) => w.metadata?.deletionTimestamp && w.metadata.finalizers?.includes(FINALIZER)),
        "the finalizer held the WebApp while the Deployment went",
      );
      // The test's delete and the finalizer's removal: no GET, no PUT. (The GETs of deployments are
      // the garbage collector's foreground deletion; cleanup reads the Deployment from the cache.)
      assert.deepEqual(teardown.webapps, { DELETE: 1, PATCH: 1 });
      assert.ok((await eventReasons("shop")).includes("TearingDown"));
      await eventually("the garbage collector removed the Service and the ConfigMap", async () => {
        const service = await client.get(Services, { name: "shop", namespace });
        const configMap = await client.get(ConfigMaps, { name: "shop", namespace });
        return service === undefined && configMap === undefined;
      });
    });
  });

  it("is refused by the API server with the paths the generated validator reports", async () => {
    const bad = {
      metadata: { name: "bad", namespace },
      spec: { image: "Not An Image", replicas: -1, port: 70000 },
    } as WebApp;
    const paths = webappValidator.validate(bad).violations.map((v) => v.path);
    assert.deepEqual(paths.sort(), ["spec.image", "spec.port", "spec.replicas"]);
    await assert.rejects(client.create(WebApps, bad), (err: Error) =>
      paths.every((path) => err.message.includes(path)),
    );
    const missing = { metadata: { name: "bad", namespace } } as WebApp;
    assert.deepEqual(
      webappValidator.validate(missing).violations.map((v) => v.path),
      ["spec"],
    );
    await assert.rejects(client.create(WebApps, missing), (err: Error) => err.message.includes("spec"));
  });
});
