import { strict as assert } from "node:assert";
import { simpleCrd, installCrds, useControlPlane } from "@tessera/testenv";
import { KubeListerWatcher, ProtobufCodec, type WatchEvent } from "../../src/index.js";
import {
  ConfigMaps,
  DaemonSets,
  defineResource,
  Deployments,
  Events,
  Jobs,
  Leases,
  Namespaces,
  Pods,
  Secrets,
  ServiceAccounts,
  Services,
  StatefulSets,
  type KubeObject,
  type Resource,
} from "@tessera/client";
import { createNamespace, send } from "../support/cluster.js";

const NS = "wire";

// The same server state read over both wires must give deep-equal objects:
// the protobuf decoder's output is what the JSON path parses, for every
// built-in kind here (dates, quantities, int-or-string, bytes, durations,
// nested and inlined structs, empty and absent fields).
describe("the protobuf wire against a real kube-apiserver", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const codec = new ProtobufCodec();

  before(async () => {
    await createNamespace(env.cp, NS);
    const ns = `/api/v1/namespaces/${NS}`;
    await send(env.cp, "POST", `${ns}/configmaps`, {
      metadata: { name: "settings", labels: { app: "shop" }, annotations: { note: "ünïcode ✓" } },
      data: { "app.conf": "port=8080\nmode=fast\n", empty: "" },
      binaryData: { blob: Buffer.from([0, 1, 2, 250]).toString("base64") },
    });
    await send(env.cp, "POST", `${ns}/configmaps`, { metadata: { name: "bare" } });
    await send(env.cp, "POST", `${ns}/secrets`, {
      metadata: { name: "token" },
      type: "Opaque",
      data: { password: Buffer.from("s3cr3t").toString("base64") },
    });
    await send(env.cp, "POST", `${ns}/serviceaccounts`, { metadata: { name: "robot" } });
    await send(env.cp, "POST", `${ns}/services`, {
      metadata: { name: "web" },
      spec: {
        selector: { app: "web" },
        ports: [
          { name: "http", port: 80, targetPort: "http" },
          { name: "admin", port: 9000, targetPort: 9001, protocol: "TCP" },
        ],
        sessionAffinity: "ClientIP",
      },
    });
    await send(env.cp, "POST", `${ns}/pods`, {
      metadata: { name: "web-0", labels: { app: "web" } },
      spec: {
        containers: [
          {
            name: "web",
            image: "registry.example.com/web:1.0",
            ports: [{ name: "http", containerPort: 8080 }],
            env: [{ name: "MODE", value: "fast" }, { name: "EMPTY" }],
            resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "0.5Gi" } },
            readinessProbe: { httpGet: { path: "/", port: "http" }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: 8080 } },
            volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
          },
        ],
        volumes: [{ name: "config", configMap: { name: "settings", defaultMode: 420 } }],
        terminationGracePeriodSeconds: 45,
      },
    });
    // An ephemeral container (EphemeralContainerCommon is embedded): only its subresource adds one.
    await send(env.cp, "PATCH", `${ns}/pods/web-0/ephemeralcontainers`, {
      spec: {
        ephemeralContainers: [
          { name: "debug", image: "busybox:1", command: ["sh"], stdin: true, targetContainerName: "web" },
        ],
      },
    });
    await send(env.cp, "POST", `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      metadata: { name: "db" },
      spec: {
        replicas: 0,
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        template: {
          metadata: { labels: { app: "db" } },
          spec: {
            containers: [{ name: "db", image: "db:1", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
            tolerations: [{ key: "k", operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 }],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
          },
        ],
        persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" },
      },
    });
    await send(env.cp, "POST", `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
      metadata: { name: "agent" },
      spec: {
        selector: { matchLabels: { app: "agent" } },
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "10%", maxSurge: 0 } },
        template: {
          metadata: { labels: { app: "agent" } },
          spec: {
            nodeSelector: { "kubernetes.io/os": "linux" },
            containers: [{ name: "agent", image: "agent:1", securityContext: { privileged: true } }],
            volumes: [{ name: "host", hostPath: { path: "/var/log", type: "Directory" } }],
          },
        },
      },
    });
    await send(env.cp, "POST", `/apis/batch/v1/namespaces/${NS}/jobs`, {
      metadata: { name: "once" },
      spec: {
        suspend: true,
        backoffLimit: 0,
        activeDeadlineSeconds: 600,
        template: { spec: { restartPolicy: "Never", containers: [{ name: "once", image: "once:1" }] } },
      },
    });
    await send(env.cp, "POST", "/api/v1/nodes", {
      metadata: { name: "wire-node", labels: { "kubernetes.io/os": "linux" } },
      spec: {
        podCIDR: "10.9.0.0/24",
        podCIDRs: ["10.9.0.0/24"],
        taints: [{ key: "k", effect: "NoSchedule" }],
      },
      status: {
        capacity: { cpu: "4", memory: "8Gi", pods: "110" },
        allocatable: { cpu: "3500m", memory: "7.5Gi", pods: "110" },
        addresses: [{ type: "InternalIP", address: "10.9.0.1" }],
      },
    });
    await send(env.cp, "POST", "/api/v1/persistentvolumes", {
      metadata: { name: "wire-pv" },
      spec: {
        capacity: { storage: "5Gi" },
        accessModes: ["ReadWriteOnce"],
        hostPath: { path: "/srv/pv" },
        persistentVolumeReclaimPolicy: "Retain",
        mountOptions: ["ro"],
      },
    });
    await send(env.cp, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
      metadata: { name: "web" },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "web" } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 1 } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "web:1" }] },
        },
      },
    });
    await send(env.cp, "POST", `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
      metadata: { name: "leader" },
      spec: {
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        acquireTime: "2026-12-04T07:00:00.123456Z",
        renewTime: "2026-12-04T07:00:10.654321Z",
        leaseTransitions: 0,
      },
    });
    await send(env.cp, "POST", `${ns}/events`, {
      metadata: { name: "web.1" },
      involvedObject: { kind: "Pod", name: "web-0", namespace: NS },
      reason: "Started",
      message: "started",
      type: "Normal",
      firstTimestamp: "2026-12-04T07:00:00Z",
      lastTimestamp: "2026-12-04T07:00:05Z",
      count: 2,
      eventTime: null,
    });
  });

  const kinds: Array<[string, Resource]> = [
    ["ConfigMaps", ConfigMaps],
    ["Secrets", Secrets],
    ["ServiceAccounts", ServiceAccounts],
    ["Services", Services],
    ["Pods", Pods],
    ["Deployments", Deployments],
    ["StatefulSets", StatefulSets],
    ["DaemonSets", DaemonSets],
    ["Jobs", Jobs],
    ["Leases", Leases],
    ["Events", Events],
  ];
  const managedFieldsOf = (o: KubeObject) =>
    (o.metadata as Record<string, unknown> | undefined)?.["managedFields"];
  /**
   * The one thing the protobuf wire does not carry: the TypeMeta of an object
   * embedded in another (a StatefulSet's volumeClaimTemplates, which the API
   * server defaults to v1 PersistentVolumeClaim). Its message has no field for
   * it, so every protobuf client (client-go's too) reads it as absent.
   */
  const withoutEmbeddedTypeMeta = <T extends KubeObject>(o: T): T => {
    const spec = (o as { spec?: { volumeClaimTemplates?: Array<Record<string, unknown>> } }).spec;
    if (!spec?.volumeClaimTemplates) return o;
    const volumeClaimTemplates = spec.volumeClaimTemplates.map(({ apiVersion, kind, ...rest }) => {
      void apiVersion;
      void kind;
      return rest;
    });
    return { ...o, spec: { ...spec, volumeClaimTemplates } };
  };
  const byName = (a: KubeObject, b: KubeObject) =>
    (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");

  for (const [label, resource] of kinds) {
    it(`${label}: a LIST over protobuf deep-equals the LIST over JSON`, async () => {
      const json = new KubeListerWatcher(env.cp.kubeConfig, resource, { namespace: NS });
      const proto = new KubeListerWatcher(env.cp.kubeConfig, resource, {
        namespace: NS,
        wire: "protobuf",
        protobufCodec: codec,
      });
      const a = await json.list({});
      // At the same resourceVersion: a write anywhere in between would move the list's own.
      const b = await proto.list({
        resourceVersion: a.metadata?.resourceVersion ?? "",
        resourceVersionMatch: "Exact",
      });
      assert.equal(proto.lastWire, "protobuf");
      assert.ok(a.items.length > 0, "objects to compare");
      assert.deepEqual(
        { ...b, items: [...b.items].sort(byName) },
        { ...a, items: a.items.map(withoutEmbeddedTypeMeta).sort(byName) },
      );
    });
  }

  it("stripManagedFields: both wires leave managedFields out, and nothing else, on LIST and watch", async () => {
    const twoKinds: Array<[string, Resource]> = [
      ["Pods", Pods],
      ["ConfigMaps", ConfigMaps],
    ];
    for (const [label, resource] of twoKinds) {
      const full = await new KubeListerWatcher(env.cp.kubeConfig, resource, { namespace: NS }).list({});
      assert.ok(
        full.items.some((o) => managedFieldsOf(o) !== undefined),
        `${label}: managedFields to leave out`,
      );
      const at = {
        resourceVersion: full.metadata?.resourceVersion ?? "",
        resourceVersionMatch: "Exact" as const,
      };
      const expected = full.items
        .map((o) => {
          const metadata: Record<string, unknown> = { ...o.metadata };
          delete metadata["managedFields"];
          return { ...o, metadata };
        })
        .sort(byName);
      for (const wire of ["json", "protobuf"] as const) {
        const lw = new KubeListerWatcher(env.cp.kubeConfig, resource, {
          namespace: NS,
          wire,
          protobufCodec: codec,
          stripManagedFields: true,
        });
        const list = await lw.list(at);
        assert.equal(lw.lastWire, wire);
        assert.deepEqual([...list.items].sort(byName), expected, `${label} LIST over ${wire}`);
        const watched: KubeObject[] = [];
        const stop = new AbortController();
        await lw
          .watch(
            { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true },
            (event) => {
              if (event.type === "BOOKMARK") stop.abort();
              else watched.push(event.object);
            },
            stop.signal,
          )
          .catch((err: unknown) => {
            if (!stop.signal.aborted) throw err;
          });
        assert.ok(watched.length > 0 && watched.every((o) => managedFieldsOf(o) === undefined));
        assert.deepEqual(
          watched
            .filter((o) => o.metadata?.namespace === NS)
            .sort(byName)
            .map((o) => o.metadata?.name),
          expected.map((o) => o.metadata?.name),
          `${label} watch-list over ${wire}`,
        );
      }
    }
  });

  const Nodes = defineResource<KubeObject>({
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    scope: "Cluster",
  });
  const PersistentVolumes = defineResource<KubeObject>({
    group: "",
    version: "v1",
    kind: "PersistentVolume",
    plural: "persistentvolumes",
    scope: "Cluster",
  });
  for (const [label, resource] of [
    ["Namespaces", Namespaces],
    ["Nodes", Nodes],
    ["PersistentVolumes", PersistentVolumes],
  ] as Array<[string, Resource]>) {
    it(`${label} (cluster-scoped): a LIST over protobuf deep-equals the LIST over JSON`, async () => {
      const a = await new KubeListerWatcher(env.cp.kubeConfig, resource).list({});
      const b = await new KubeListerWatcher(env.cp.kubeConfig, resource, {
        wire: "protobuf",
        protobufCodec: codec,
      }).list({ resourceVersion: a.metadata?.resourceVersion ?? "", resourceVersionMatch: "Exact" });
      assert.ok(a.items.length > 0, "objects to compare");
      assert.deepEqual(b, a);
    });
  }

  it("an ephemeral container's embedded fields come through the protobuf wire", async () => {
    const pods = await new KubeListerWatcher(env.cp.kubeConfig, Pods, {
      namespace: NS,
      wire: "protobuf",
      protobufCodec: codec,
    }).list({});
    const web = pods.items.find((p) => p.metadata?.name === "web-0");
    assert.deepEqual(
      web?.spec?.ephemeralContainers?.map((c) => [c.name, c.image, c.command, c.targetContainerName]),
      [["debug", "busybox:1", ["sh"], "web"]],
    );
  });

  /** The initial events of a watch-list, and the end bookmark, over one wire. */
  async function watchList(wire: "json" | "protobuf", resource: Resource) {
    const lw = new KubeListerWatcher(env.cp.kubeConfig, resource, {
      namespace: NS,
      wire,
      protobufCodec: codec,
    });
    const events: WatchEvent<KubeObject>[] = [];
    const stop = new AbortController();
    await lw
      .watch(
        { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true },
        (event) => {
          events.push(event);
          if (event.type === "BOOKMARK") stop.abort();
        },
        stop.signal,
      )
      .catch((err: unknown) => {
        if (!stop.signal.aborted) throw err;
      });
    return { events, wire: lw.lastWire };
  }

  it("a watch-list over protobuf gives the same initial events and end bookmark as over JSON", async () => {
    for (const [, resource] of kinds) {
      const json = await watchList("json", resource);
      const proto = await watchList("protobuf", resource);
      assert.equal(proto.wire, "protobuf");
      const sorted = (events: WatchEvent<KubeObject>[]) => [
        ...events.filter((e) => e.type !== "BOOKMARK").sort((x, y) => byName(x.object, y.object)),
        ...events.filter((e) => e.type === "BOOKMARK"),
      ];
      const jsonEvents = json.events.map((e) =>
        e.type === "BOOKMARK" ? e : { ...e, object: withoutEmbeddedTypeMeta(e.object) },
      );
      assert.deepEqual(sorted(proto.events), sorted(jsonEvents), resource.plural);
    }
  });

  it("a custom resource asked for protobuf is answered, and decoded, as JSON", async () => {
    await installCrds(env.cp, simpleCrd({ group: "wire.example.com", kind: "Gadget" }));
    const Gadgets = defineResource<KubeObject>({
      group: "wire.example.com",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      scope: "Namespaced",
    });
    await send(env.cp, "POST", `/apis/wire.example.com/v1/namespaces/${NS}/gadgets`, {
      apiVersion: "wire.example.com/v1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { size: 3 },
    });
    const lw = new KubeListerWatcher(env.cp.kubeConfig, Gadgets, {
      namespace: NS,
      wire: "protobuf",
      protobufCodec: codec,
    });
    const list = await lw.list({});
    assert.equal(lw.lastWire, "json");
    assert.equal(list.items[0]?.metadata?.name, "g");
  });
});
