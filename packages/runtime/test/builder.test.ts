import { strict as assert } from "node:assert";
import { ConfigMaps, Secrets, defineResource, type KubeObject } from "@tessera/client";
import { BuilderError, ControllerBuilder } from "../src/codegen.js";
import { generationChanged } from "../src/predicates.js";

const Widgets = defineResource<KubeObject>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

describe("ControllerBuilder", () => {
  it("reads as a sentence and yields the definition", () => {
    const definition = new ControllerBuilder()
      .for(Widgets, { predicates: [generationChanged()] })
      .owns(ConfigMaps)
      .watches(Secrets, (secret) => [{ namespace: secret.metadata?.namespace ?? "", name: "w" }])
      .withOptions({ concurrency: 4, mode: "sharded" })
      .build();
    assert.equal(definition.name, "widget", "named for the primary kind by default");
    assert.equal(definition.for, Widgets);
    assert.equal(definition.predicates.length, 1);
    assert.deepEqual(
      definition.watches.map((w) => [w.kind.kind, w.map.type]),
      [
        ["ConfigMap", "owner"],
        ["Secret", "mapped"],
      ],
    );
    assert.deepEqual(definition.options, { concurrency: 4, mode: "sharded" });
  });

  it("takes triggers, everyOwner, a watch of the primary kind without cache options, and maxIntervalMs", () => {
    const emitter = { on: () => undefined, off: () => undefined };
    const definition = new ControllerBuilder()
      .for(Widgets, { statusUpdates: "reconcile" })
      .owns(ConfigMaps, { everyOwner: true })
      .watches(Widgets, () => [])
      .triggers(emitter, { event: "changed" })
      .withOptions({ maxIntervalMs: 60_000 })
      .build();
    assert.deepEqual(definition.watches[0]?.map, { type: "owner", everyOwner: true });
    assert.equal(definition.statusUpdates, "reconcile");
    assert.equal(new ControllerBuilder().for(Widgets).build().statusUpdates, "ignore", "the default");
    assert.deepEqual(definition.triggers, [{ source: emitter, event: "changed" }]);
    assert.throws(
      () =>
        new ControllerBuilder()
          .for(Widgets)
          .watches(Widgets, () => [], { namespaces: "a" })
          .triggers({} as never)
          .withOptions({ maxIntervalMs: -1 })
          .owns(ConfigMaps, { indexes: { "tessera.dev/controller-owner-uid": () => [] } })
          .build(),
      (error: unknown) => {
        assert.ok(error instanceof BuilderError);
        assert.equal(error.problems.length, 4, error.message);
        assert.match(
          error.message,
          /a watch of the primary kind reads the primary's cache; give cache options \(namespaces\) to for\(\)/,
        );
        assert.match(error.message, /the source must be an async iterable of requests or an event emitter/);
        assert.match(
          error.message,
          /maxIntervalMs must be 0 \(no resync floor\) or a positive number of ms, got -1/,
        );
        assert.match(error.message, /is the runtime's index of owned kinds by controller owner/);
        return true;
      },
    );
  });

  it("records the permissions a controller needs(...), and refuses an empty one with an example", () => {
    const definition = new ControllerBuilder()
      .for(Widgets)
      .needs({ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] })
      .build();
    assert.deepEqual(definition.permissions, [
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] },
    ]);
    assert.throws(
      () =>
        new ControllerBuilder()
          .for(Widgets)
          .needs({ apiGroups: [""], resources: [], verbs: ["get"] })
          .build(),
      (e: Error) => e instanceof BuilderError && /resources must be non-empty lists, e\.g\./.test(e.message),
    );
  });

  it("collects every mistake and reports them together at the end", () => {
    const builder = new ControllerBuilder()
      .named("Widget_Controller")
      .for(Widgets)
      .for(ConfigMaps)
      .owns(Widgets)
      .withOptions({ concurrency: 0, reconcileTimeoutMs: -1 });
    assert.throws(
      () => builder.build(),
      (error: unknown) => {
        assert.ok(error instanceof BuilderError);
        assert.equal(error.problems.length, 5, error.message);
        assert.match(error.message, /controller "Widget_Controller" is not valid/);
        assert.match(error.message, /a controller has one primary kind; use owns\(\) or watches\(\)/);
        assert.match(error.message, /lowercase letters, digits and '-'/);
        assert.match(error.message, /concurrency must be a whole number of at least 1, got 0/);
        assert.match(error.message, /reconcileTimeoutMs must be 0/);
        assert.match(error.message, /Widget \(example.com\/v1\) is the primary kind/);
        return true;
      },
    );
  });

  it("says how to fix a declaration without a primary kind", () => {
    assert.throws(
      () => new ControllerBuilder().owns(ConfigMaps).build(),
      /no primary kind: call for\(kind\) once/,
    );
  });

  it("hands a completed declaration to its manager, with a function as the reconciler", () => {
    const completed: string[] = [];
    new ControllerBuilder((definition, reconciler) => {
      completed.push(definition.name);
      assert.equal(typeof reconciler.reconcile, "function");
    })
      .for(ConfigMaps)
      .named("mirror")
      .complete(() => undefined);
    assert.deepEqual(completed, ["mirror"]);
  });

  it("records each kind's cache options, the predicates left out", () => {
    const bySecret = (o: KubeObject) => [o.metadata?.name ?? ""];
    const definition = new ControllerBuilder()
      .for(Widgets, { namespaces: ["team-a", "team-b"], predicates: [generationChanged()] })
      .owns(ConfigMaps, { labels: { app: "widget" }, fields: "metadata.name!=skip", metadataOnly: true })
      .watches(Secrets, () => [], { indexes: { "spec.secretName": bySecret } })
      .build();
    assert.deepEqual(definition.cache, { namespaces: ["team-a", "team-b"] });
    assert.deepEqual(definition.watches[0]?.cache, {
      labels: { app: "widget" },
      fields: "metadata.name!=skip",
      metadataOnly: true,
    });
    assert.equal(definition.watches[1]?.cache.indexes?.["spec.secretName"], bySecret);
  });

  it("refuses bad cache options as one BuilderError naming each field, before anything starts", () => {
    const one = (o: KubeObject) => [o.metadata?.name ?? ""];
    const other = (o: KubeObject) => [o.metadata?.uid ?? ""];
    assert.throws(
      () =>
        new ControllerBuilder()
          .for(Widgets, { namespaces: ["", "Team_A"] })
          .owns(ConfigMaps, {
            labels: "app in (a,b",
            fields: "spec.nodeName~n1",
            indexes: { "": one, byOwner: one },
          })
          .watches(ConfigMaps, () => [], { indexes: { byOwner: other }, fields: {} })
          .build(),
      (error: unknown) => {
        assert.ok(error instanceof BuilderError);
        assert.equal(error.problems.length, 7, error.message);
        assert.match(
          error.message,
          /for\(Widget \(example.com\/v1\)\): namespaces: "" is not a namespace name/,
        );
        assert.match(
          error.message,
          /for\(Widget \(example.com\/v1\)\): namespaces: "Team_A" is not a namespace name/,
        );
        assert.match(error.message, /owns\(ConfigMap \(v1\)\): labels: label selector "app in \(a,b"/);
        assert.match(error.message, /owns\(ConfigMap \(v1\)\): fields: cannot parse "spec.nodeName~n1"/);
        assert.match(error.message, /owns\(ConfigMap \(v1\)\): indexes: an index name is empty/);
        assert.match(
          error.message,
          /watches\(ConfigMap \(v1\)\): fields: an empty selector selects everything/,
        );
        assert.match(
          error.message,
          /indexes: "byOwner" of ConfigMap \(v1\) is declared twice with different functions/,
        );
        return true;
      },
    );
    // The same function under one name twice is one index, not a conflict.
    new ControllerBuilder()
      .for(Widgets)
      .owns(ConfigMaps, { indexes: { byOwner: one } })
      .watches(ConfigMaps, () => [], { indexes: { byOwner: one } })
      .build();
  });
});
