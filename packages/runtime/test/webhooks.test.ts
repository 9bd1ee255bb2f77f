import { strict as assert } from "node:assert";
import fc from "fast-check";
import { silentLogger } from "@tessera/core";
import { FakeClock } from "@tessera/core/testing";
import {
  Admission,
  defineConversion,
  defineResource,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionWebhookPlugin,
  type AnyAdmissionWebhookPlugin,
  type KubeObject,
  type WebhookBuilder,
} from "../src/index.js";
import { BuilderError, webhookDefinitionOf, type AdmissionWebhookDefinition } from "../src/codegen.js";
import { AdmissionHandler, Converter, handlerDeadlineMs, jsonPatchDiff } from "../src/server.js";
import { jsonEqual, jsonPatch, type Json } from "../src/testing/json-patches.js";
import { tankConversion, tankFromHub, tankToHub, type TankV1, type TankV1alpha1 } from "./support/tanks.js";

interface Widget extends KubeObject {
  spec?: { replicas?: number; tier?: string };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

class WidgetWebhook implements AdmissionWebhookPlugin<Widget> {
  webhook(on: WebhookBuilder) {
    return on.for(Widgets, { timeoutSeconds: 5 });
  }
  default(widget: Widget) {
    widget.spec = { tier: "standard", ...widget.spec };
    return widget;
  }
  validateCreate(widget: Widget) {
    if ((widget.spec?.replicas ?? 1) < 1) {
      return Admission.deny("a Widget needs a replica", {
        causes: [{ field: "spec.replicas", message: "must be at least 1" }],
      });
    }
    return Admission.allow({ warnings: (widget.spec?.replicas ?? 0) > 10 ? ["many replicas"] : [] });
  }
  validateDelete() {}
}

const request = (operation: AdmissionRequest["operation"], object: Widget | null, old?: Widget) =>
  ({
    uid: "u-1",
    kind: { group: "example.com", version: "v1", kind: "Widget" },
    resource: { group: "example.com", version: "v1", resource: "widgets" },
    operation,
    userInfo: { username: "alice" },
    object,
    ...(old ? { oldObject: old } : {}),
  }) as AdmissionRequest;

const widget = (spec: Widget["spec"]): Widget => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "n" },
  ...(spec ? { spec } : {}),
});

function handler(
  plugin: AnyAdmissionWebhookPlugin,
  type: "mutate" | "validate",
  clock = new FakeClock(),
): AdmissionHandler {
  const definition = webhookDefinitionOf(plugin) as AdmissionWebhookDefinition;
  return new AdmissionHandler({
    plugin: plugin as AdmissionWebhookPlugin<KubeObject>,
    definition,
    type,
    clock,
    logger: silentLogger,
  });
}

describe("admission webhook declarations", () => {
  it("reads the kind, paths and operations from an unconstructed plugin's prototype", () => {
    const definition = webhookDefinitionOf(WidgetWebhook.prototype);
    assert.deepEqual(definition, {
      type: "admission",
      for: Widgets,
      mutatingPath: "/mutate-example-com-v1-widget",
      validatingPath: "/validate-example-com-v1-widget",
      operations: ["CREATE", "DELETE"],
      failurePolicy: "Fail",
      timeoutSeconds: 5,
    });
  });

  it("a validating-only plugin has no mutating path", () => {
    class Validating {
      webhook(on: WebhookBuilder) {
        return on.for(Widgets, { failurePolicy: "Ignore" });
      }
      validateUpdate() {}
    }
    const definition = webhookDefinitionOf(Validating.prototype) as AdmissionWebhookDefinition;
    assert.equal(definition.mutatingPath, undefined);
    assert.deepEqual(definition.operations, ["UPDATE"]);
    assert.equal(definition.failurePolicy, "Ignore");
    assert.equal(definition.timeoutSeconds, 10);
  });

  it("collects the declaration's mistakes into one BuilderError naming the plugin", () => {
    class Bad {
      webhook(on: WebhookBuilder) {
        return on.for(Widgets, { timeoutSeconds: 31 }).for(Widgets);
      }
    }
    assert.throws(
      () => webhookDefinitionOf(Bad.prototype),
      (error: unknown) =>
        error instanceof BuilderError &&
        error.controller === "Bad" &&
        error.problems.length === 3 &&
        /timeoutSeconds 31/.test(error.message) &&
        /one kind/.test(error.message) &&
        /nothing to serve/.test(error.message),
    );
  });

  it("a conversion's definition is its hub and spokes at /convert", () => {
    assert.deepEqual(webhookDefinitionOf(tankConversion), {
      type: "conversion",
      group: "conversion.example.com",
      plural: "tanks",
      kind: "Tank",
      hubVersion: "v1",
      spokeVersions: ["v1alpha1"],
      path: "/convert",
    });
  });

  it("defineConversion refuses the hub's own version and a spoke without both functions", () => {
    assert.throws(
      () => defineConversion(Widgets, { v1: { toHub: (w: Widget) => w, fromHub: (w: Widget) => w } }),
      /v1 is the hub's own version/,
    );
    assert.throws(
      () => defineConversion(Widgets, { v1beta1: { toHub: (w: Widget) => w } } as never),
      /v1beta1 needs both toHub and fromHub/,
    );
  });
});

describe("AdmissionHandler", () => {
  it("answers default() with the JSON patch from the object sent to the one returned", async () => {
    const response = await handler(new WidgetWebhook(), "mutate").review(
      request("CREATE", widget({ replicas: 2 })),
      new AbortController().signal,
    );
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, "JSONPatch");
    const patch = JSON.parse(Buffer.from(response.patch!, "base64").toString()) as unknown;
    assert.deepEqual(patch, [{ op: "add", path: "/spec/tier", value: "standard" }]);
  });

  it("sends no patch when default() changes nothing", async () => {
    const response = await handler(new WidgetWebhook(), "mutate").review(
      request("UPDATE", widget({ replicas: 2, tier: "gold" }), widget({})),
      new AbortController().signal,
    );
    assert.deepEqual(response, { uid: "u-1", allowed: true });
  });

  it("a denial carries its message, code 422 and the field causes; an allowance its warnings", async () => {
    const h = handler(new WidgetWebhook(), "validate");
    const denied = await h.review(request("CREATE", widget({ replicas: 0 })), new AbortController().signal);
    assert.deepEqual(denied, {
      uid: "u-1",
      allowed: false,
      status: {
        code: 422,
        reason: "Invalid",
        message: "a Widget needs a replica",
        details: {
          causes: [{ reason: "FieldValueInvalid", field: "spec.replicas", message: "must be at least 1" }],
        },
      },
    });
    const warned = await h.review(request("CREATE", widget({ replicas: 20 })), new AbortController().signal);
    assert.deepEqual(warned, { uid: "u-1", allowed: true, warnings: ["many replicas"] });
    const deleted = await h.review(request("DELETE", null, widget({})), new AbortController().signal);
    assert.deepEqual(deleted, { uid: "u-1", allowed: true });
  });

  it("passes dryRun and the user to the method", async () => {
    const seen: AdmissionContext[] = [];
    class Recording {
      webhook(on: WebhookBuilder) {
        return on.for(Widgets);
      }
      validateCreate(_: Widget, ctx: AdmissionContext<Widget>) {
        seen.push(ctx);
      }
    }
    await handler(new Recording(), "validate").review(
      { ...request("CREATE", widget({})), dryRun: true },
      new AbortController().signal,
    );
    assert.equal(seen[0]?.dryRun, true);
    assert.equal(seen[0]?.userInfo.username, "alice");
    assert.equal(seen[0]?.operation, "CREATE");
  });

  for (const policy of ["Fail", "Ignore"] as const) {
    it(`a method past its deadline aborts its signal and is answered by failurePolicy ${policy}`, async () => {
      const clock = new FakeClock();
      let aborted = false;
      class Slow {
        webhook(on: WebhookBuilder) {
          return on.for(Widgets, { failurePolicy: policy, timeoutSeconds: 10 });
        }
        validateCreate(_: Widget, ctx: AdmissionContext<Widget>) {
          return new Promise<void>((resolve) =>
            ctx.signal.addEventListener("abort", () => {
              aborted = true;
              setTimeout(resolve, 5); // answers late: the response must not wait for it
            }),
          );
        }
      }
      const answer = handler(new Slow(), "validate", clock).review(
        request("CREATE", widget({})),
        new AbortController().signal,
      );
      await clock.advance(handlerDeadlineMs(10) - 1);
      assert.equal(aborted, false);
      await clock.advance(1);
      const response = await answer;
      assert.equal(aborted, true);
      if (policy === "Ignore") assert.deepEqual(response, { uid: "u-1", allowed: true });
      else {
        assert.equal(response.allowed, false);
        assert.equal(response.status?.code, 504);
        assert.match(response.status.message!, /did not answer within 9000 ms/);
      }
    });
  }

  it("a method that throws is refused with 500 and its message under Fail", async () => {
    class Broken {
      webhook(on: WebhookBuilder) {
        return on.for(Widgets);
      }
      validateCreate(): never {
        throw new Error("the quota service is down");
      }
    }
    const response = await handler(new Broken(), "validate").review(
      request("CREATE", widget({})),
      new AbortController().signal,
    );
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
    assert.match(response.status.message!, /Widget webhook failed: the quota service is down/);
  });

  it("the deadline leaves the API server a margin: a second, or a fifth below five seconds", () => {
    assert.equal(handlerDeadlineMs(10), 9000);
    assert.equal(handlerDeadlineMs(30), 29_000);
    assert.equal(handlerDeadlineMs(2), 1600);
    assert.equal(handlerDeadlineMs(1), 800);
  });
});

describe("jsonPatchDiff", () => {
  it("applied to the first value gives the second (property)", () => {
    const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;
    const object = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 5 });
    // Pairs that share structure, as a defaulted object shares most of the original's.
    const pair = object.chain((a) =>
      fc.tuple(
        fc.constant(a),
        fc.oneof(
          object,
          fc.constant(a),
          fc.record({ extra: json }).map((e) => ({ ...a, ...e })),
        ),
      ),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const patched = jsonPatch(structuredClone(a), jsonPatchDiff(a, b));
        assert.ok(
          jsonEqual(patched, b),
          `${JSON.stringify(a)} -> ${JSON.stringify(b)}: ${JSON.stringify(patched)}`,
        );
      }),
      { numRuns: 500 },
    );
  });

  it("escapes ~ and / in keys (RFC 6901)", () => {
    assert.deepEqual(jsonPatchDiff({}, { "a/b~c": 1 }), [{ op: "add", path: "/a~1b~0c", value: 1 }]);
  });
});

describe("conversion", () => {
  const labels = fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.string({ maxLength: 5 }), {
    maxKeys: 2,
  });
  const meta = fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }), namespace: fc.constant("n") });
  const spoke: fc.Arbitrary<TankV1alpha1> = fc.record(
    {
      apiVersion: fc.constant("conversion.example.com/v1alpha1"),
      kind: fc.constant("Tank"),
      metadata: meta,
      spec: fc.record(
        { size: fc.integer(), image: fc.string({ maxLength: 10 }), labels },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ["apiVersion", "kind", "metadata"] },
  );
  const hub: fc.Arbitrary<TankV1> = fc.record(
    {
      apiVersion: fc.constant("conversion.example.com/v1"),
      kind: fc.constant("Tank"),
      metadata: meta,
      spec: fc.record(
        {
          workload: fc.record(
            { replicas: fc.integer(), image: fc.string({ maxLength: 10 }) },
            { requiredKeys: [] },
          ),
          labels,
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ["apiVersion", "kind", "metadata"] },
  );
  // fast-check's records have no prototype; compare as JSON, which is what crosses the wire.
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
  const emptyWorkload = (t: TankV1) =>
    t.spec?.workload !== undefined && Object.keys(t.spec.workload).length === 0;

  it("v1alpha1 -> v1 -> v1alpha1 and v1 -> v1alpha1 -> v1 lose nothing (property)", () => {
    fc.assert(
      fc.property(spoke, (t) => {
        assert.deepEqual(plain(tankFromHub(tankToHub(t))), plain(t));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      // An empty workload {} has nothing to carry: the one hub value v1alpha1 cannot tell from none.
      fc.property(
        hub.filter((t) => !emptyWorkload(t)),
        (t) => {
          assert.deepEqual(plain(tankToHub(tankFromHub(t))), plain(t));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the Converter goes spoke to hub and back, sets apiVersion, keeps metadata, and fails unknown versions", () => {
    const converter = new Converter([tankConversion]);
    const old: TankV1alpha1 = {
      apiVersion: "conversion.example.com/v1alpha1",
      kind: "Tank",
      metadata: { name: "a", namespace: "n", uid: "x", resourceVersion: "7" },
      spec: { size: 3, image: "nginx" },
    };
    const up = converter.convert({
      uid: "r",
      desiredAPIVersion: "conversion.example.com/v1",
      objects: [old],
    });
    assert.deepEqual(up, {
      uid: "r",
      result: { status: "Success" },
      convertedObjects: [
        {
          apiVersion: "conversion.example.com/v1",
          kind: "Tank",
          metadata: { name: "a", namespace: "n", uid: "x", resourceVersion: "7" },
          spec: { workload: { replicas: 3, image: "nginx" } },
        },
      ],
    });
    const down = converter.convert({
      uid: "r",
      desiredAPIVersion: "conversion.example.com/v1alpha1",
      objects: up.convertedObjects,
    });
    assert.deepEqual(JSON.parse(JSON.stringify(down.convertedObjects)), [old]);
    const unknown = converter.convert({
      uid: "r",
      desiredAPIVersion: "conversion.example.com/v2",
      objects: [old],
    });
    assert.equal(unknown.result.status, "Failure");
    assert.match(
      (unknown.result as { message: string }).message,
      /cannot convert Tank n\/a from conversion.example.com\/v1alpha1 to conversion.example.com\/v2: unknown version v2 of Tank \(the conversion knows v1 \(hub\), v1alpha1\)/,
    );
    assert.deepEqual(unknown.convertedObjects, []);
  });
});
