// The FakeClient's own rules, fast; its agreement with the real API server
// is the differential suite's (integration/fake-client-parity.test.ts).
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { FakeClock } from "@tessera/core/testing";
import { fuzzAsync } from "@tessera/core/testing/fuzz";
import { sleep } from "@tessera/core";
import {
  ConfigMaps,
  Deployments,
  defineResource,
  handleFinalizer,
  retryOnConflict,
  type KubeObject,
} from "../src/index.js";
import { ApiError, ConflictError, NotFoundError } from "@tessera/client";
import { FakeClient, serverErrors } from "../src/testing.js";

interface Widget extends KubeObject {
  spec?: { size?: number; data?: Record<string, string>; list?: string[] };
  status?: { ready?: boolean };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const Plain = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Plain",
  plural: "plains",
  scope: "Namespaced",
});
const ref = { name: "a", namespace: "ns" };
const widget = (spec: Widget["spec"] = { size: 1 }, extra: Partial<Widget> = {}): Widget => ({
  metadata: { name: "a", namespace: "ns" },
  spec,
  ...extra,
});
const rv = (o: KubeObject | undefined): number => Number(o?.metadata?.resourceVersion);

describe("FakeClient", () => {
  let clock: FakeClock;
  let fake: FakeClient;
  beforeEach(() => {
    clock = new FakeClock({ wallTime: new Date("2026-01-02T03:04:05Z") });
    fake = new FakeClient({ resources: [Widgets, Plain], withoutStatusSubresource: [Plain], clock });
  });

  it("is a Client and an ApiReader: reads are 'api'", () => {
    assert.equal(fake.reads, "api");
  });

  it("create stamps uid, creationTimestamp, resourceVersion and generation 1; one counter across kinds", async () => {
    const w = await fake.create(Widgets, widget());
    assert.match(w.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(w.metadata!.creationTimestamp, "2026-01-02T03:04:05Z");
    assert.equal(w.metadata!.generation, 1);
    assert.equal(w.apiVersion, "example.com/v1");
    const c = await fake.create(ConfigMaps, { metadata: { name: "c", namespace: "ns" }, data: {} });
    assert.equal(c.metadata!.generation, undefined, "ConfigMaps have no generation on the server");
    assert.ok(rv(c) > rv(w));
    await assert.rejects(
      fake.create(Widgets, widget()),
      /409 AlreadyExists: widgets.example.com "a" already exists/,
    );
  });

  it("generation moves on spec changes only; status writes keep spec, main writes keep status", async () => {
    const w = await fake.create(Widgets, widget({ size: 1 }, { status: { ready: true } }));
    assert.equal(w.status, undefined, "create drops the status of a kind with a status subresource");
    const labelled = await fake.update(Widgets, { ...w, metadata: { ...w.metadata, labels: { a: "b" } } });
    assert.equal(labelled.metadata!.generation, 1);
    const status = await fake.updateStatus(Widgets, {
      ...labelled,
      spec: { size: 9 },
      status: { ready: true },
    });
    assert.deepEqual(
      [status.metadata!.generation, status.spec, status.status],
      [1, { size: 1 }, { ready: true }],
    );
    const resized = await fake.update(Widgets, { ...status, spec: { size: 2 }, status: { ready: false } });
    assert.deepEqual([resized.metadata!.generation, resized.status], [2, { ready: true }]);
    const same = await fake.update(Widgets, resized);
    assert.equal(
      same.metadata!.resourceVersion,
      resized.metadata!.resourceVersion,
      "a no-op write stores nothing",
    );
  });

  it("without a status subresource: status is written with the object and bumps generation; updateStatus is 404", async () => {
    const p = await fake.create(Plain, widget({ size: 1 }, { status: { ready: true } }));
    assert.deepEqual(p.status, { ready: true });
    const q = await fake.update(Plain, { ...p, status: { ready: false } });
    assert.equal(q.metadata!.generation, 2);
    await assert.rejects(fake.updateStatus(Plain, q), NotFoundError);
  });

  it("built-in kinds: a Deployment's generation moves with its spec", async () => {
    const d = await fake.create(Deployments, {
      metadata: { name: "d", namespace: "ns" },
      spec: { selector: {}, template: {} },
    });
    assert.equal(d.metadata!.generation, 1);
    const e = await fake.update(Deployments, { ...d, spec: { ...d.spec!, replicas: 3 } });
    assert.equal(e.metadata!.generation, 2);
  });

  it("a stale resourceVersion conflicts with the server's message", async () => {
    const w = await fake.create(Widgets, widget());
    await fake.update(Widgets, { ...w, spec: { size: 2 } });
    await assert.rejects(fake.update(Widgets, { ...w, spec: { size: 3 } }), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.equal(
        e.message,
        'update widgets.example.com ns/a: 409 Conflict: Operation cannot be fulfilled on widgets.example.com "a": the object has been modified; please apply your changes to the latest version and try again',
      );
      return true;
    });
  });

  it("custom resources take no unconditional update; built-in kinds do", async () => {
    const w = await fake.create(Widgets, widget());
    const { resourceVersion: _rv, ...meta } = w.metadata!;
    await assert.rejects(
      fake.update(Widgets, { ...w, metadata: meta }),
      /422 Invalid: .*must be specified for an update/,
    );
    const c = await fake.create(ConfigMaps, { metadata: { name: "c", namespace: "ns" }, data: { a: "1" } });
    const { resourceVersion: _crv, ...cmeta } = c.metadata!;
    assert.deepEqual((await fake.update(ConfigMaps, { ...c, metadata: cmeta, data: { a: "2" } })).data, {
      a: "2",
    });
  });

  it("finalizers: delete marks, removing the last finalizer removes", async () => {
    await fake.create(Widgets, widget({ size: 1 }, { metadata: { ...ref, finalizers: ["x/y"] } }));
    assert.equal(await fake.delete(Widgets, ref), true);
    const marked = (await fake.get(Widgets, ref))!;
    assert.equal(marked.metadata!.deletionTimestamp, "2026-01-02T03:04:05Z");
    assert.equal(marked.metadata!.generation, 2);
    await fake.update(Widgets, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    assert.equal(await fake.get(Widgets, ref), undefined);
    assert.equal(await fake.delete(Widgets, ref), false);
    await assert.rejects(fake.update(Widgets, marked), NotFoundError);
  });

  it("lists by namespace, label selector and metadata fields, in key order", async () => {
    for (const [name, ns, app] of [
      ["b", "n1", "web"],
      ["a", "n1", "web"],
      ["c", "n2", "db"],
    ] as const) {
      await fake.create(ConfigMaps, { metadata: { name, namespace: ns, labels: { app } } });
    }
    const names = (l: KubeObject[]) => l.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`);
    assert.deepEqual(names(await fake.list(ConfigMaps, { labels: "app=web" })), ["n1/a", "n1/b"]);
    assert.deepEqual(names(await fake.list(ConfigMaps, { namespace: "n2" })), ["n2/c"]);
    assert.deepEqual(names(await fake.list(ConfigMaps, { fields: { "metadata.name": "b" } })), ["n1/b"]);
    await assert.rejects(
      fake.list(ConfigMaps, { fields: { "data.x": "1" } }),
      /400 BadRequest: field label not supported/,
    );
  });

  it("serves declared indexes as the cached client does: by index and by fields, IndexNotDeclared for a missing one", async () => {
    const byOwner = (o: KubeObject & { data?: Record<string, string> }) =>
      o.data?.["owner"] ? [o.data["owner"]] : [];
    const indexed = new FakeClient({ indexes: [[ConfigMaps, { "data.owner": byOwner }]], clock });
    for (const [name, ns, owner] of [
      ["a", "n1", "w1"],
      ["b", "n2", "w1"],
      ["c", "n1", "w2"],
      ["d", "n1", ""],
    ] as const) {
      await indexed.create(ConfigMaps, { metadata: { name, namespace: ns }, data: owner ? { owner } : {} });
    }
    const names = (l: KubeObject[]) => l.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`);
    assert.deepEqual(names(await indexed.list(ConfigMaps, { index: { name: "data.owner", value: "w1" } })), [
      "n1/a",
      "n2/b",
    ]);
    // A field named for an index reads it; with a namespace and metadata fields beside it.
    assert.deepEqual(
      names(await indexed.list(ConfigMaps, { fields: { "data.owner": "w1" }, namespace: "n2" })),
      ["n2/b"],
    );
    assert.deepEqual(
      names(await indexed.list(ConfigMaps, { fields: { "data.owner": "w1", "metadata.name": "a" } })),
      ["n1/a"],
    );
    // The index follows writes: what a write changes is filed again.
    const c = await indexed.get(ConfigMaps, { name: "c", namespace: "n1" });
    await indexed.update(ConfigMaps, { ...c!, data: { owner: "w1" } });
    assert.deepEqual(names(await indexed.list(ConfigMaps, { index: { name: "data.owner", value: "w1" } })), [
      "n1/a",
      "n1/c",
      "n2/b",
    ]);

    // A missing index: the cached client's error, on the kind with indexes and on one without.
    const notDeclared = (name: string) => (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.equal(e.reason, "IndexNotDeclared");
      assert.match(
        e.message,
        new RegExp(`no index "${name.replace(".", "\\.")}" on the cache of configmaps`),
      );
      assert.match(e.message, /Tokens\.ApiReader/);
      return true;
    };
    await assert.rejects(
      indexed.list(ConfigMaps, { fields: { "data.colour": "red" } }),
      notDeclared("data.colour"),
    );
    await assert.rejects(
      indexed.list(ConfigMaps, { index: { name: "spec.x", value: "1" } }),
      notDeclared("spec.x"),
    );
    await assert.rejects(
      fake.list(ConfigMaps, { index: { name: "data.owner", value: "w1" } }),
      notDeclared("data.owner"),
    );
    // Without indexes on the kind, fields are the server's: 400 for one it does not select by.
    await assert.rejects(
      fake.list(ConfigMaps, { fields: { "data.owner": "w1" } }),
      /400 BadRequest: field label not supported/,
    );

    // Declared again: the same function is fine, another one is refused.
    indexed.declareIndexes(ConfigMaps, { "data.owner": byOwner });
    assert.throws(
      () => indexed.declareIndexes(ConfigMaps, { "data.owner": () => [] }),
      /index "data\.owner" of configmaps is declared with another function already/,
    );
    assert.throws(
      () => indexed.declareIndexes({ group: "example.com", version: "v1", kind: "Gadget" }, { x: () => [] }),
      /the fake serves no example\.com\/v1 Gadget/,
    );
  });

  it("merge and JSON patch; a failing test op is 422", async () => {
    await fake.create(Widgets, widget({ size: 1, data: { a: "1" } }));
    const merged = await fake.patch(Widgets, ref, {
      type: "merge",
      patch: { spec: { data: { a: null, b: "2" } } },
    });
    assert.deepEqual(merged.spec, { size: 1, data: { b: "2" } });
    const patched = await fake.patch(Widgets, ref, {
      type: "json",
      patch: [
        { op: "test", path: "/spec/size", value: 1 },
        { op: "replace", path: "/spec/size", value: 5 },
        { op: "add", path: "/spec/list", value: ["x"] },
        { op: "add", path: "/spec/list/-", value: "y" },
        { op: "move", from: "/spec/data/b", path: "/spec/data/c" },
      ],
    });
    assert.deepEqual(patched.spec, { size: 5, data: { c: "2" }, list: ["x", "y"] });
    assert.equal(patched.metadata!.generation, 3);
    await assert.rejects(
      fake.patch(Widgets, ref, { type: "json", patch: [{ op: "test", path: "/spec/size", value: 1 }] }),
      /422 Invalid/,
    );
  });

  it("server-side apply: maps merge, lists are replaced, conflicts unless force, managedFields per manager", async () => {
    const apply = (
      data: Record<string, string>,
      list: string[] | undefined,
      manager: string,
      force = false,
    ) =>
      fake.apply(
        Widgets,
        { metadata: { ...ref }, spec: { data, ...(list ? { list } : {}) } },
        { fieldManager: manager, force },
      );
    await apply({ a: "1" }, ["x", "y"], "one");
    const two = await apply({ b: "2" }, undefined, "two");
    assert.deepEqual(two.spec, { data: { a: "1", b: "2" }, list: ["x", "y"] });
    await assert.rejects(apply({ a: "9" }, undefined, "two"), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.match(e.message, /Apply failed with 1 conflict: conflict with "one": \.spec\.data\.a/);
      return true;
    });
    const forced = await apply({ a: "9", b: "2" }, ["z"], "two", true);
    assert.deepEqual(forced.spec, { data: { a: "9", b: "2" }, list: ["z"] });
    const managers = (forced.metadata!.managedFields as { manager: string; operation: string }[]).map(
      (f) => `${f.manager}/${f.operation}`,
    );
    // "two" took every field "one" had: "one" owns nothing and leaves managedFields, as on the server.
    assert.deepEqual(managers, ["two/Apply"]);
    // "one" declaring nothing removes nothing "two" owns.
    const after = await apply({}, undefined, "one");
    assert.deepEqual(after.spec, { data: { a: "9", b: "2" }, list: ["z"] });
  });

  it("server-side apply on a CRD's list-map and set: merged by key and value, conflicts per entry field, entries dropped", async () => {
    const crd = {
      spec: {
        group: "example.com",
        names: { plural: "widgets" },
        versions: [
          {
            name: "v1",
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    properties: {
                      members: {
                        type: "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        items: { type: "object", properties: { name: { type: "string" } } },
                      },
                      tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    type Member = { name: string; role?: string };
    const lists = new FakeClient({ resources: [Widgets], crds: [crd] });
    const apply = (spec: { members?: Member[]; tags?: string[] }, manager: string, force = false) =>
      lists.apply(Widgets, { metadata: { ...ref }, spec } as never, { fieldManager: manager, force });
    await apply({ members: [{ name: "a", role: "lead" }], tags: ["x"] }, "one");
    const two = await apply({ members: [{ name: "b", role: "dev" }], tags: ["x", "y"] }, "two");
    assert.deepEqual(two.spec, {
      members: [
        { name: "a", role: "lead" },
        { name: "b", role: "dev" },
      ],
      tags: ["x", "y"],
    });
    const fields = (o: KubeObject, manager: string) =>
      (o.metadata!.managedFields as { manager: string; fieldsV1: Record<string, unknown> }[]).find(
        (f) => f.manager === manager,
      )?.fieldsV1;
    assert.deepEqual(fields(two, "two"), {
      "f:spec": {
        "f:members": { 'k:{"name":"b"}': { ".": {}, "f:name": {}, "f:role": {} } },
        "f:tags": { 'v:"x"': {}, 'v:"y"': {} },
      },
    });
    await assert.rejects(apply({ members: [{ name: "a", role: "ops" }] }, "two"), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.match(e.message, /conflict with "one": \.spec\.members\[name="a"\]\.role/);
      return true;
    });
    // With force "two" takes a's role; its own entry b, which it no longer declares, goes, and so does its tag y.
    const forced = await apply({ members: [{ name: "a", role: "ops" }], tags: ["x"] }, "two", true);
    assert.deepEqual(forced.spec, { members: [{ name: "a", role: "ops" }], tags: ["x"] });
    // "one" still shares entry a (its key) and tag x: dropping them keeps what "two" owns.
    const after = await apply({}, "one");
    assert.deepEqual(after.spec, { members: [{ name: "a", role: "ops" }], tags: ["x"] });
    assert.throws(
      () => new FakeClient({ crds: [{ spec: {} }] }),
      /options\.crds takes CustomResourceDefinition objects/,
    );
  });

  it("server-side apply on a Deployment: containers merged by name, env by name, the selector atomic", async () => {
    const lists = new FakeClient();
    const dref = { name: "d", namespace: "ns" };
    await lists.apply(
      Deployments,
      {
        metadata: dref,
        spec: {
          selector: { matchLabels: { app: "d" } },
          template: {
            metadata: { labels: { app: "d" } },
            spec: { containers: [{ name: "app", image: "i:1", env: [{ name: "A", value: "1" }] }] },
          },
        },
      },
      { fieldManager: "one" },
    );
    const two = await lists.apply(
      Deployments,
      {
        metadata: dref,
        spec: {
          template: {
            spec: {
              containers: [
                { name: "app", env: [{ name: "B", value: "2" }] },
                { name: "side", image: "s" },
              ],
            },
          },
        },
      } as never,
      { fieldManager: "two" },
    );
    assert.deepEqual(two.spec?.template.spec?.containers, [
      {
        name: "app",
        image: "i:1",
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
      },
      { name: "side", image: "s" },
    ]);
    const one = (
      two.metadata!.managedFields as { manager: string; fieldsV1: { "f:spec": Record<string, unknown> } }[]
    ).find((f) => f.manager === "one")!.fieldsV1["f:spec"];
    assert.deepEqual(one["f:selector"], {});
  });

  it("generateName, dryRun, an unknown kind, a missing name", async () => {
    const g = await fake.create(ConfigMaps, { metadata: { generateName: "x-", namespace: "ns" } });
    assert.match(g.metadata!.name!, /^x-[a-z0-9]{5}$/);
    const dry = await fake.create(
      ConfigMaps,
      { metadata: { name: "dry", namespace: "ns" } },
      { dryRun: true },
    );
    assert.equal(dry.metadata!.resourceVersion, undefined);
    assert.equal(await fake.get(ConfigMaps, { name: "dry", namespace: "ns" }), undefined);
    const Gadgets = defineResource({
      group: "x.io",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      scope: "Cluster",
    });
    await assert.rejects(fake.list(Gadgets), /list gadgets.x.io: 404 NotFound: 404 page not found/);
    await assert.rejects(fake.create(ConfigMaps, { metadata: { namespace: "ns" } }), TypeError);
  });

  it("seeds objects (not counted as writes) and records the writes in order", async () => {
    const seeded = new FakeClient({
      resources: [Widgets],
      objects: [{ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "s", namespace: "ns" } }],
    });
    assert.ok(await seeded.get(Widgets, { name: "s", namespace: "ns" }));
    await seeded.delete(Widgets, { name: "s", namespace: "ns" });
    assert.deepEqual(
      seeded.writes.map((w) => `${w.verb} ${w.kind} ${w.object.metadata!.name}`),
      ["delete Widget s"],
    );
    assert.throws(
      () => seeded.seed({ apiVersion: "x/v1", kind: "Nope", metadata: { name: "n" } }),
      /options.resources/,
    );
  });

  describe("interceptors", () => {
    it("fail the next update with Conflict: retryOnConflict retries and succeeds", async () => {
      await fake.create(Widgets, widget());
      const hook = fake.intercept({ verb: "update", resource: Widgets, name: "a", times: 1 }, (call) => {
        throw serverErrors.conflict(call.context, Widgets, "a");
      });
      let attempts = 0;
      const done = await retryOnConflict(
        "resize",
        async () => {
          attempts++;
          const live = (await fake.get(Widgets, ref))!;
          return fake.update(Widgets, { ...live, spec: { size: 7 } });
        },
        { initialMs: 0 },
      );
      assert.equal(attempts, 2);
      assert.equal(hook.calls, 1);
      assert.equal(done.spec?.size, 7);
    });

    it("a failing cleanup keeps the finalizer, and the object", async () => {
      await fake.create(
        Widgets,
        widget({ size: 1 }, { metadata: { ...ref, finalizers: ["example.com/cleanup"] } }),
      );
      await fake.delete(Widgets, ref);
      const marked = (await fake.get(Widgets, ref))!;
      await assert.rejects(
        handleFinalizer(fake, Widgets, marked, "example.com/cleanup", () =>
          Promise.reject(new Error("bucket busy")),
        ),
        /bucket busy/,
      );
      assert.deepEqual((await fake.get(Widgets, ref))?.metadata?.finalizers, ["example.com/cleanup"]);
      // The cleanup's own write fails once: the finalizer stays until a retry succeeds.
      fake.intercept({ verb: "update", times: 1 }, () => {
        throw new Error("connection reset");
      });
      await assert.rejects(
        handleFinalizer(fake, Widgets, marked, "example.com/cleanup", () => Promise.resolve()),
        /reset/,
      );
      assert.ok(await fake.get(Widgets, ref));
      assert.equal(
        await handleFinalizer(fake, Widgets, marked, "example.com/cleanup", () => Promise.resolve()),
        "finalized",
      );
      assert.equal(await fake.get(Widgets, ref), undefined);
    });

    it("delays every list by 200 ms on the fake clock; remove() ends it", async () => {
      const hook = fake.intercept({ verb: "list" }, async (_call, next) => {
        await sleep(clock, 200);
        return next();
      });
      let answered = false;
      const listing = fake.list(ConfigMaps).then(() => (answered = true));
      await clock.advance(199);
      assert.equal(answered, false);
      await clock.advance(1);
      await listing;
      assert.equal(answered, true);
      hook.remove();
      assert.deepEqual(await fake.list(ConfigMaps), []);
    });

    it("answers in place of the store; peek reads past the interceptors", async () => {
      await fake.create(Widgets, widget({ size: 1 }));
      fake.intercept({ verb: "get", resource: Widgets }, () => widget({ size: 42 }));
      assert.equal((await fake.get(Widgets, ref))?.spec?.size, 42);
      assert.equal(fake.peek(Widgets, ref)?.spec?.size, 1);
    });
  });

  it("property: resourceVersions increase and generations move only on spec changes", async () => {
    type Op =
      | { op: "create" | "delete" | "unfinalize"; name: string }
      | { op: "spec" | "status" | "label"; name: string; value: number }
      | { op: "apply"; name: string; value: number; manager: string };
    const name = fc.constantFrom("a", "b", "c");
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constantFrom("create" as const, "delete" as const, "unfinalize" as const), name }),
      fc.record({
        op: fc.constantFrom("spec" as const, "status" as const, "label" as const),
        name,
        value: fc.nat(3),
      }),
      fc.record({
        op: fc.constant("apply" as const),
        name,
        value: fc.nat(3),
        manager: fc.constantFrom("m1", "m2"),
      }),
    );
    await fuzzAsync(
      "FakeClient resourceVersions and generations",
      fc.array(op, { maxLength: 30 }),
      async (ops) => {
        const client = new FakeClient({ resources: [Widgets], clock });
        let lastRv = 0;
        for (const o of ops) {
          const r = { name: o.name, namespace: "ns" };
          const before = await client.get(Widgets, r);
          let after: Widget | undefined;
          try {
            switch (o.op) {
              case "create":
                after = await client.create(Widgets, {
                  metadata: { ...r, finalizers: ["keep"] },
                  spec: { size: 0 },
                });
                break;
              case "delete":
                await client.delete(Widgets, r);
                after = await client.get(Widgets, r);
                break;
              case "unfinalize":
                if (!before) continue;
                after = await client.update(Widgets, {
                  ...before,
                  metadata: { ...before.metadata, finalizers: [] },
                });
                break;
              case "spec":
                if (!before) continue;
                after = await client.update(Widgets, { ...before, spec: { size: o.value } });
                break;
              case "status":
                if (!before) continue;
                after = await client.updateStatus(Widgets, { ...before, status: { ready: o.value > 1 } });
                break;
              case "label":
                if (!before) continue;
                after = await client.update(Widgets, {
                  ...before,
                  metadata: { ...before.metadata, labels: { v: String(o.value) } },
                });
                break;
              case "apply":
                after = await client.apply(
                  Widgets,
                  { metadata: r, spec: { size: o.value } },
                  { fieldManager: o.manager, force: true },
                );
                break;
            }
          } catch (error) {
            // Refused writes (AlreadyExists, NotFound) change nothing.
            assert.ok(
              error instanceof ConflictError ||
                error instanceof NotFoundError ||
                /409|404/.test(String(error)),
              String(error),
            );
            continue;
          }
          if (!after) continue;
          const changed = !before || before.metadata!.resourceVersion !== after.metadata!.resourceVersion;
          if (changed) {
            assert.ok(rv(after) > lastRv, `resourceVersion ${rv(after)} after ${lastRv}`);
            lastRv = rv(after);
          }
          if (
            before &&
            !(
              before.metadata!.deletionTimestamp === undefined &&
              after.metadata!.deletionTimestamp !== undefined
            )
          ) {
            const specChanged = JSON.stringify(before.spec) !== JSON.stringify(after.spec);
            assert.equal(
              after.metadata!.generation,
              before.metadata!.generation! + (specChanged ? 1 : 0),
              JSON.stringify(o),
            );
          }
        }
      },
      200,
    );
  });
});
