import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, Watch, type V1ConfigMap } from "@kubernetes/client-node";
import {
  ControlPlane,
  FaultProxy,
  kubeConfigVia,
  useControlPlane,
  ControlPlaneStartError,
  writeServiceAccount,
} from "../../src/index.js";

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
// Computed here, independently of @tessera/sharding, so the test checks the server.
function fnv1a64(s: string): bigint {
  let h = FNV_OFFSET;
  for (const b of Buffer.from(s, "utf8")) h = ((h ^ BigInt(b)) * FNV_PRIME) & MASK;
  return h;
}
const hex = (n: bigint) =>
  n === 1n << 64n ? "0x10000000000000000" : "0x" + n.toString(16).padStart(16, "0");

interface Event {
  type: string;
  object: {
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
  };
}

function watchEvents(
  kc: ControlPlane["kubeConfig"],
  path: string,
  query: Record<string, string | boolean>,
  until: (events: Event[]) => boolean,
  timeoutMs = 20_000,
): Promise<{ events: Event[]; error?: unknown }> {
  const events: Event[] = [];
  return new Promise((resolve, reject) => {
    let req: { abort(): void } | undefined;
    const timer = setTimeout(() => {
      req?.abort();
      reject(new Error(`watch ${path} timed out; got ${JSON.stringify(events.map((e) => e.type))}`));
    }, timeoutMs);
    new Watch(kc)
      .watch(
        path,
        query,
        (type: string, object: Event["object"]) => {
          events.push({ type, object });
          if (until(events)) {
            clearTimeout(timer);
            req?.abort();
            resolve({ events });
          }
        },
        (error) => {
          clearTimeout(timer);
          resolve({ events, error });
        },
      )
      .then((r) => (req = r), reject);
  });
}

describe("ControlPlane (real etcd + kube-apiserver)", function () {
  const env = useControlPlane();
  const ns = "default";

  it("serves create, get, list and delete of a ConfigMap through @kubernetes/client-node", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "crud" }, data: { k: "v" } },
    });
    const got = await core.readNamespacedConfigMap({ namespace: ns, name: "crud" });
    assert.equal(got.data?.k, "v");
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    assert.ok(list.items.some((c: V1ConfigMap) => c.metadata?.name === "crud"));
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "crud" });
    await assert.rejects(
      core.readNamespacedConfigMap({ namespace: ns, name: "crud" }),
      (e: { code?: number }) => e.code === 404,
    );
  });

  it("reports the pinned version on /version", async () => {
    const res = await env.cp.raw("/version");
    assert.equal(res.status, 200);
    assert.match((JSON.parse(res.body) as { gitVersion: string }).gitVersion, /^v1\.3[67]\.\d+$/);
  });

  it("watch-list sends existing objects as ADDED, then the initial-events-end BOOKMARK", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "watchlist" } } });
    for (let i = 0; i < 5; i++) {
      await core.createNamespacedConfigMap({
        namespace: "watchlist",
        body: { metadata: { name: `cm-${i}` } },
      });
    }
    const { events } = await watchEvents(
      env.cp.kubeConfig,
      "/api/v1/namespaces/watchlist/configmaps",
      {
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        resourceVersionMatch: "NotOlderThan",
        resourceVersion: "",
      },
      (evs) => evs.some((e) => e.type === "BOOKMARK"),
    );
    const added = events.filter((e) => e.type === "ADDED").map((e) => e.object.metadata?.name);
    assert.deepEqual(added.sort(), ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    const last = events[events.length - 1]!;
    assert.equal(last.type, "BOOKMARK");
    assert.equal(last.object.metadata?.annotations?.["k8s.io/initial-events-end"], "true");
    assert.ok(last.object.metadata?.resourceVersion);
  });

  it("filters a LIST by shardSelector on the FNV-1a 64 hash of the uid and echoes shardInfo", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "sharded" } } });
    const uids = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const cm = await core.createNamespacedConfigMap({
        namespace: "sharded",
        body: { metadata: { name: `s-${i}` } },
      });
      uids.set(cm.metadata!.name!, cm.metadata!.uid!);
    }
    const start = 0n;
    const end = 1n << 63n;
    const selector = `shardRange(object.metadata.uid, '${hex(start)}', '${hex(end)}')`;
    const res = await env.cp.raw(
      `/api/v1/namespaces/sharded/configmaps?shardSelector=${encodeURIComponent(selector)}`,
    );
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body) as {
      metadata: { shardInfo?: { selector?: string } };
      items: V1ConfigMap[];
    };
    assert.ok(body.metadata.shardInfo?.selector, `no shardInfo in ${JSON.stringify(body.metadata)}`);
    const expected = [...uids]
      .filter(([, uid]) => fnv1a64(uid) >= start && fnv1a64(uid) < end)
      .map(([n]) => n);
    assert.deepEqual(body.items.map((c) => c.metadata!.name!).sort(), expected.sort());
    assert.ok(expected.length > 0 && expected.length < 40, "both halves should be non-empty with 40 objects");
  });

  it("after compact() a watch from an old resourceVersion gets 410 Gone", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "compacted" } } });
    const first = await core.createNamespacedConfigMap({
      namespace: "compacted",
      body: { metadata: { name: "c" } },
    });
    const oldRv = first.metadata!.resourceVersion!;
    for (let i = 0; i < 3; i++) {
      await core.patchNamespacedConfigMap({
        namespace: "compacted",
        name: "c",
        body: [{ op: "add", path: "/data", value: { i: String(i) } }],
      });
    }
    await env.cp.compact();
    const { events, error } = await watchEvents(
      env.cp.kubeConfig,
      "/api/v1/namespaces/compacted/configmaps",
      { resourceVersion: oldRv, allowWatchBookmarks: true },
      (evs) => evs.some((e) => e.type === "ERROR"),
    );
    const gone =
      events.find((e) => e.type === "ERROR")?.object.code === 410 ||
      (error as { statusCode?: number })?.statusCode === 410;
    assert.ok(gone, `expected 410, got events ${JSON.stringify(events)} error ${String(error)}`);
  });

  it("a cut through the fault proxy ends a watch", async () => {
    const proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
    try {
      const kc = kubeConfigVia(env.cp.kubeConfig, proxy.url);
      let ended: (err: unknown) => void = () => {};
      const done = new Promise<unknown>((r) => (ended = r));
      await new Watch(kc).watch(
        "/api/v1/namespaces/default/configmaps",
        { allowWatchBookmarks: true },
        () => {},
        (err) => ended(err),
      );
      assert.equal(proxy.stats.open, 1);
      proxy.cutAll();
      const err = await Promise.race([
        done,
        new Promise((_, rej) => setTimeout(() => rej(new Error("watch did not end")), 10_000)),
      ]);
      assert.ok(err, "the watch should end with an error");
      assert.ok(proxy.stats.bytesDown > 0);
    } finally {
      await proxy.stop();
    }
  });

  it("restartApiserver and restartEtcd keep the data", async () => {
    const core = () => env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core().createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "survivor" }, data: { a: "1" } },
    });
    await env.cp.restartApiserver();
    assert.equal((await core().readNamespacedConfigMap({ namespace: ns, name: "survivor" })).data?.a, "1");
    await env.cp.restartEtcd();
    assert.equal((await core().readNamespacedConfigMap({ namespace: ns, name: "survivor" })).data?.a, "1");
  });

  it("writeServiceAccount writes a Pod's credentials: the token authenticates as the ServiceAccount, through ca.crt", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tessera-sa-")), "serviceaccount");
    const account = await writeServiceAccount(env.cp, dir, { name: "reader", clusterRole: "view" });
    assert.equal(readFileSync(join(dir, "namespace"), "utf8"), "default");
    assert.equal(readFileSync(join(dir, "token"), "utf8"), account.token);
    for (const file of ["token", "ca.crt", "namespace"])
      assert.equal(
        statSync(join(dir, file)).mode & 0o777,
        0o644,
        `${file} is readable by a container's user`,
      );
    // What an operator on the in-cluster path does: the host and port from the environment, the CA and token from the files.
    type Review = { status?: { userInfo?: { username?: string } } };
    const review = await new Promise<Review>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: account.env.KUBERNETES_SERVICE_HOST,
          port: account.env.KUBERNETES_SERVICE_PORT,
          path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          method: "POST",
          ca: readFileSync(join(dir, "ca.crt")),
          headers: {
            Authorization: `Bearer ${readFileSync(join(dir, "token"), "utf8")}`,
            "Content-Type": "application/json",
          },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
          res.on("end", () =>
            res.statusCode === 201
              ? resolve(JSON.parse(body) as Review)
              : reject(new Error(`HTTP ${res.statusCode}: ${body}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }));
    });
    assert.equal(review.status?.userInfo?.username, "system:serviceaccount:default:reader");
  });
});

describe("ControlPlane bad input", function () {
  it("an unknown feature gate fails start() with kube-apiserver's own message and leaves no process", async () => {
    const cp = new ControlPlane({ featureGates: { NoSuchGateAnywhere: true } });
    await assert.rejects(
      cp.start(),
      (e: Error) => e instanceof ControlPlaneStartError && /NoSuchGateAnywhere/.test(e.message),
    );
    assert.equal(cp.runningProcesses, 0);
  });

  it("a flag kube-apiserver rejects fails start() with its message", async () => {
    const cp = new ControlPlane({ apiserverFlags: ["--no-such-flag-at-all=1"] });
    await assert.rejects(
      cp.start(),
      (e: Error) => e instanceof ControlPlaneStartError && /no-such-flag-at-all/.test(e.message),
    );
    assert.equal(cp.runningProcesses, 0);
  });

  it("two control planes run side by side", async () => {
    const a = new ControlPlane();
    const b = new ControlPlane();
    await Promise.all([a.start(), b.start()]);
    try {
      assert.notEqual(a.apiserverPort, b.apiserverPort);
      await a.kubeConfig
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: "only-in-a" } } });
      await assert.rejects(b.kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: "only-in-a" }));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
