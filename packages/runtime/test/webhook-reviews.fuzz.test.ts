import { strict as assert } from "node:assert";
import fc from "fast-check";
import { fuzz, fuzzAsync } from "@tessera/core/testing/fuzz";
import { silentLogger } from "@tessera/core";
import { FakeClock } from "@tessera/core/testing";
import {
  Admission,
  defineConversion,
  defineResource,
  type KubeObject,
  type WebhookBuilder,
} from "../src/index.js";
import { webhookDefinitionOf, type AdmissionWebhookDefinition } from "../src/codegen.js";
import {
  AdmissionHandler,
  Converter,
  decodeAdmissionReview,
  decodeConversionReview,
  WebhookRequestError,
} from "../src/server.js";

// What the API server (or anything that reaches the webhook port) sends is
// outside input: whatever the body, decoding returns a request the handlers
// can rely on or throws a WebhookRequestError with a 4xx status and a
// message; never a TypeError, never a hang. A decoded ConversionReview then
// converts or fails with a message, never throws.

const key = fc.oneof(
  fc.constantFrom(
    "apiVersion",
    "kind",
    "request",
    "uid",
    "operation",
    "object",
    "oldObject",
    "userInfo",
    "resource",
    "desiredAPIVersion",
    "objects",
    "metadata",
    "__proto__",
    "constructor",
  ),
  fc.string({ maxLength: 6 }),
);
const scalar = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(
    "admission.k8s.io/v1",
    "admission.k8s.io/v1beta1",
    "AdmissionReview",
    "apiextensions.k8s.io/v1",
    "ConversionReview",
    "CREATE",
    "UPDATE",
    "DELETE",
    "CONNECT",
    "example.com/v1",
    "example.com/v1alpha1",
    "example.com/v9",
    "Widget",
    "x",
  ),
);
const node: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, scalar, tie("object"), fc.array(tie("value"), { maxLength: 3 })),
  object: fc.dictionary(key, tie("value"), { maxKeys: 6 }),
})).value;

/** Reviews that are nearly right: the valid shape with one field replaced by anything. */
const admissionLike = fc
  .record({
    apiVersion: fc.oneof(fc.constant("admission.k8s.io/v1"), scalar),
    kind: fc.oneof(fc.constant("AdmissionReview"), scalar),
    request: fc.oneof(
      fc.record(
        {
          uid: fc.oneof(fc.uuid(), scalar),
          operation: fc.oneof(fc.constantFrom("CREATE", "UPDATE", "DELETE"), scalar),
          kind: fc.oneof(fc.constant({ group: "example.com", version: "v1", kind: "Widget" }), node),
          resource: fc.oneof(fc.constant({ group: "example.com", version: "v1", resource: "widgets" }), node),
          object: node,
          oldObject: node,
          userInfo: node,
        },
        { requiredKeys: [] },
      ),
      node,
    ),
  })
  .map((r) => JSON.stringify(r));

const widget = (version: string, spec: unknown) => ({
  apiVersion: `example.com/${version}`,
  kind: "Widget",
  metadata: { name: "w", namespace: "n" },
  spec,
});
const conversionLike = fc
  .record({
    apiVersion: fc.oneof(fc.constant("apiextensions.k8s.io/v1"), scalar),
    kind: fc.oneof(fc.constant("ConversionReview"), scalar),
    request: fc.oneof(
      fc.record(
        {
          uid: fc.oneof(fc.uuid(), scalar),
          desiredAPIVersion: fc.oneof(fc.constantFrom("example.com/v1", "example.com/v1alpha1"), scalar),
          objects: fc.oneof(
            fc.array(
              fc.oneof(
                fc.tuple(fc.constantFrom("v1", "v1alpha1", "v2"), node).map(([v, spec]) => widget(v, spec)),
                node,
              ),
              { maxLength: 3 },
            ),
            node,
          ),
        },
        { requiredKeys: [] },
      ),
      node,
    ),
  })
  .map((r) => JSON.stringify(r));

const bodies = (nearly: fc.Arbitrary<string>) =>
  fc.oneof(
    nearly,
    fc.string(),
    node.map((v) => JSON.stringify(v) ?? ""),
    nearly.chain(
      (text) => fc.nat({ max: text.length }).map((cut) => text.slice(0, cut)), // a body cut short
    ),
  );

function refusedCleanly(error: unknown): void {
  assert.ok(
    error instanceof WebhookRequestError,
    `not a WebhookRequestError: ${String((error as Error)?.stack ?? error)}`,
  );
  assert.ok(error.status >= 400 && error.status < 500, String(error.status));
  assert.ok(error.message.length > 10, error.message);
}

// A conversion that reads the spec as the test's spoke has it: it must not throw on what the fuzzer gives.
interface Widget extends KubeObject {
  spec?: { replicas?: unknown; size?: unknown };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const converter = new Converter([
  defineConversion(Widgets, {
    v1alpha1: {
      toHub: (w: Widget): Widget => ({ ...w, spec: { replicas: w.spec?.size } }),
      fromHub: (w: Widget): Widget => ({ ...w, spec: { size: w.spec?.replicas } }),
    },
  }),
]);

/** A plugin that reads the object carelessly, as authors do: its throws must become answers. */
class CarelessWebhook {
  webhook(on: WebhookBuilder) {
    return on.for(Widgets);
  }
  default(widget: Widget) {
    (widget.spec as { replicas: unknown }).replicas ??= 1;
    return widget;
  }
  validateCreate(widget: Widget) {
    return Number(widget.spec?.replicas) < 1 ? Admission.deny("no replicas") : Admission.allow();
  }
  validateUpdate(widget: Widget, old: Widget) {
    return widget.spec?.size === old.spec?.size ? undefined : Admission.deny("size is fixed");
  }
  validateDelete() {}
}
const careless = new CarelessWebhook();
const handlers = (["mutate", "validate"] as const).map(
  (type) =>
    new AdmissionHandler({
      plugin: careless,
      definition: webhookDefinitionOf(careless) as AdmissionWebhookDefinition,
      type,
      clock: new FakeClock(),
      logger: silentLogger,
    }),
);

describe("webhook review decoding (fuzz)", () => {
  it("AdmissionReview: a request with a uid and an operation, or a WebhookRequestError", () => {
    fuzz(
      "webhook: AdmissionReview bodies",
      bodies(admissionLike),
      (body) => {
        try {
          const request = decodeAdmissionReview(body);
          assert.equal(typeof request.uid, "string");
          assert.ok(["CREATE", "UPDATE", "DELETE", "CONNECT"].includes(request.operation));
          assert.equal(typeof request.userInfo, "object");
        } catch (error) {
          refusedCleanly(error);
        }
      },
      1000,
    );
  });

  it("a decoded AdmissionReview is always answered, with its uid, whatever the plugin makes of the object", async () => {
    await fuzzAsync(
      "webhook: AdmissionReview answered",
      admissionLike,
      async (body) => {
        let request;
        try {
          request = decodeAdmissionReview(body);
        } catch (error) {
          refusedCleanly(error);
          return;
        }
        for (const handler of handlers) {
          const response = await handler.review(request, new AbortController().signal);
          assert.equal(response.uid, request.uid);
          assert.equal(typeof response.allowed, "boolean");
          if (response.patch !== undefined) {
            assert.ok(Array.isArray(JSON.parse(Buffer.from(response.patch, "base64").toString())));
          }
        }
      },
      500,
    );
  });

  it("ConversionReview: converted or failed with a message, or a WebhookRequestError", () => {
    fuzz(
      "webhook: ConversionReview bodies",
      bodies(conversionLike),
      (body) => {
        let request;
        try {
          request = decodeConversionReview(body);
        } catch (error) {
          refusedCleanly(error);
          return;
        }
        const response = converter.convert(request);
        assert.equal(response.uid, request.uid);
        if (response.result.status === "Success") {
          assert.equal(response.convertedObjects.length, request.objects.length);
          for (const o of response.convertedObjects) assert.equal(o.apiVersion, request.desiredAPIVersion);
        } else {
          assert.ok(response.result.message.length > 10);
          assert.equal(response.convertedObjects.length, 0);
        }
      },
      1000,
    );
  });
});
