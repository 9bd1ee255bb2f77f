import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import { ApiStatusError, IndexedStore, Reflector } from "../../src/index.js";
import { Namespaces, defineResource, type KubeObject, type Resource } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  describeDifference,
  listVersions,
  send,
  storeVersions,
  waitFor,
  waitForStoreEqualToList,
  kubeListerWatcher,
} from "../support/cluster.js";

const WIDGETS = defineResource({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const GADGETS = defineResource({
  group: "example.com",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  scope: "Cluster",
});
const NAMESPACES = Namespaces;

/** Runs a reflector until it synced, then hands its store to `check` and stops it. */
async function syncOnce(
  kc: KubeConfig,
  resource: Resource,
  options: { namespace?: string; labelSelector?: string },
  check: (store: IndexedStore<KubeObject>) => void | Promise<void>,
): Promise<void> {
  const store = new IndexedStore<KubeObject>();
  const reflector = new Reflector({
    listerWatcher: kubeListerWatcher(kc, resource, options),
    store,
    consistencyCheck: true,
  });
  const stop = new AbortController();
  const done = reflector.run(stop.signal);
  try {
    await waitFor(`${resource.plural} to sync`, () => reflector.hasSynced());
    assert.equal(reflector.lastSyncMode, "watch-list");
    await check(store);
  } finally {
    stop.abort();
    await done;
  }
}

/** Collects the errors a reflector reports until `count` arrived, then stops it. */
async function errorsOf(
  kc: KubeConfig,
  resource: Resource,
  count: number,
): Promise<{ err: unknown; at: number }[]> {
  const errors: { err: unknown; at: number }[] = [];
  const reflector = new Reflector({
    listerWatcher: kubeListerWatcher(kc, resource, { namespace: "default" }),
    store: new IndexedStore(),
    consistencyCheck: true,
    onError: (err) => errors.push({ err, at: performance.now() }),
  });
  const stop = new AbortController();
  const done = reflector.run(stop.signal);
  await waitFor(`${count} reported errors`, () => errors.length >= count, 30_000);
  stop.abort();
  await done;
  assert.equal(reflector.hasSynced(), false);
  return errors;
}

async function crd(cp: Parameters<typeof send>[0], r: Resource, kind: string): Promise<void> {
  await send(cp, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    metadata: { name: `${r.plural}.${r.group}` },
    spec: {
      group: r.group,
      scope: r.scope,
      names: { plural: r.plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: r.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  });
  await waitFor(`${r.plural} to be served`, async () => {
    const res = await cp.raw(`/apis/${r.group}/${r.version}/${r.plural}`);
    return res.status === 200;
  });
}

describe("any resource, any credentials, against a real kube-apiserver", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  let readerToken = "";
  let nobodyToken = "";

  before(async function () {
    const cp = env.cp;
    await createNamespace(cp, "objects");
    await createConfigMaps(cp, "objects", 40);
    for (const sa of ["reader", "nobody"]) {
      await send(cp, "POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: sa } });
    }
    await send(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: "configmap-reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] }],
    });
    await send(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "configmap-reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "configmap-reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: "default" }],
    });
    const token = async (sa: string): Promise<string> => {
      const res = (await send(cp, "POST", `/api/v1/namespaces/default/serviceaccounts/${sa}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600 },
      })) as { status?: { token?: string } };
      assert.ok(res.status?.token);
      return res.status.token;
    };
    readerToken = await token("reader");
    nobodyToken = await token("nobody");
  });

  function kubeConfigWithUser(user: Record<string, unknown>): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: "c", server: env.cp.apiserverUrl, caData: Buffer.from(env.cp.caPem).toString("base64") },
      ],
      users: [{ name: "u", ...user }],
      contexts: [{ name: "ctx", cluster: "c", user: "u" }],
      currentContext: "ctx",
    });
    return kc;
  }

  it("authenticates with a bearer token", async () => {
    const kc = kubeConfigWithUser({ token: readerToken });
    await syncOnce(kc, CONFIGMAPS, { namespace: "objects" }, async (store) => {
      assert.equal(store.size, 40);
      await waitForStoreEqualToList(store, env.cp.kubeConfig, CONFIGMAPS, "objects");
    });
  });

  it("authenticates through an exec credential plugin", async () => {
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: readerToken },
    });
    const kc = kubeConfigWithUser({
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: ["-e", `process.stdout.write(${JSON.stringify(credential)})`],
        interactiveMode: "Never",
      },
    });
    await syncOnce(kc, CONFIGMAPS, { namespace: "objects" }, (store) => {
      assert.equal(store.size, 40);
    });
  });

  it("reflects namespaced and cluster-scoped custom resources", async () => {
    await crd(env.cp, WIDGETS, "Widget");
    await crd(env.cp, GADGETS, "Gadget");
    for (let i = 0; i < 15; i++) {
      await send(env.cp, "POST", `/apis/example.com/v1/namespaces/objects/widgets`, {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: `w-${i}` },
        spec: { size: i },
      });
      await send(env.cp, "POST", `/apis/example.com/v1/gadgets`, {
        apiVersion: "example.com/v1",
        kind: "Gadget",
        metadata: { name: `g-${i}` },
      });
    }
    const kc = env.cp.kubeConfig;
    await syncOnce(kc, WIDGETS, {}, async (store) => {
      assert.ok(store.has("objects/w-3"));
      assert.equal(describeDifference(storeVersions(store), await listVersions(kc, WIDGETS)), "");
    });
    await syncOnce(kc, GADGETS, {}, async (store) => {
      assert.ok(store.has("g-3"), "cluster-scoped objects are keyed by name");
      assert.equal(describeDifference(storeVersions(store), await listVersions(kc, GADGETS)), "");
    });
  });

  it("reflects a cluster-scoped core resource", async () => {
    const kc = env.cp.kubeConfig;
    await syncOnce(kc, NAMESPACES, {}, async (store) => {
      assert.ok(store.has("objects") && store.has("default"));
      assert.equal(describeDifference(storeVersions(store), await listVersions(kc, NAMESPACES)), "");
    });
  });

  it("passes a label selector to the server", async () => {
    const kc = env.cp.kubeConfig;
    await syncOnce(kc, CONFIGMAPS, { namespace: "objects", labelSelector: "team=red" }, async (store) => {
      assert.equal(store.size, 20);
      const want = await listVersions(kc, CONFIGMAPS, "objects", "team=red");
      assert.equal(describeDifference(storeVersions(store), want), "");
    });
  });

  it("reports a resource that does not exist (404) naming resource and verb, and retries it with backoff", async () => {
    const missing = defineResource({
      group: "nope.example.com",
      version: "v1",
      kind: "Thing",
      plural: "things",
      scope: "Namespaced",
    });
    const errors = await errorsOf(env.cp.kubeConfig, missing, 2);
    for (const { err } of errors) {
      assert.ok(err instanceof ApiStatusError, String(err));
      assert.equal(err.code, 404);
      assert.equal(err.reason, "NotFound");
      assert.equal(err.resource, "things.nope.example.com");
      assert.equal(err.verb, "list");
      assert.match(err.message, /^list things\.nope\.example\.com in namespace "default": 404 NotFound/);
    }
    const gap = (errors[1]?.at ?? 0) - (errors[0]?.at ?? 0);
    assert.ok(gap >= 800, `the retry waited the initial backoff (waited ${Math.round(gap)} ms)`);
  });

  it("reports a forbidden resource (403) naming resource and verb, and retries it with backoff", async () => {
    const errors = await errorsOf(kubeConfigWithUser({ token: nobodyToken }), CONFIGMAPS, 2);
    for (const { err } of errors) {
      assert.ok(err instanceof ApiStatusError, String(err));
      assert.equal(err.code, 403);
      assert.equal(err.reason, "Forbidden");
      assert.equal(err.resource, "configmaps");
      assert.equal(err.verb, "list");
      assert.match(err.message, /system:serviceaccount:default:nobody/);
    }
    const gap = (errors[1]?.at ?? 0) - (errors[0]?.at ?? 0);
    assert.ok(gap >= 800, `the retry waited the initial backoff (waited ${Math.round(gap)} ms)`);
  });
});
