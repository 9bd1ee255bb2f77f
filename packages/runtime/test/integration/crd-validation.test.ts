// CRD schema validation on the client, compared with the real API server's.
import { strict as assert } from "node:assert";
import { eventually, useControlPlane } from "@tessera/testenv";
import { CrdSchemaValidators, type CustomResourceDefinitionLike } from "../../src/index.js";
import { createNamespace } from "./support/widget-cluster.js";

const gadgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Gadget", plural: "gadgets", singular: "gadget", listKind: "GadgetList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["replicas"],
                properties: {
                  replicas: { type: "integer", minimum: 0 },
                  mode: { type: "string", enum: ["fast", "safe"] },
                  name: { type: "string", pattern: "^[a-z]+$" },
                  port: { "x-kubernetes-int-or-string": true },
                  size: { type: "string", default: "M" },
                  note: { type: "string", nullable: true },
                  extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe("CrdSchemaValidator (against the real API server's validation)", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  let ns = "";
  let crd: CustomResourceDefinitionLike;

  before(async () => {
    const res = await env.cp.raw("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(gadgetCrd),
    });
    assert.equal(res.status, 201, res.body);
    crd = JSON.parse(res.body) as CustomResourceDefinitionLike;
    await eventually(
      "gadgets are served",
      async () => (await env.cp.raw("/apis/example.com/v1/gadgets")).status === 200,
    );
    ns = await createNamespace(env.cp, "gadgets");
  });

  const gadget = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: "example.com/v1",
    kind: "Gadget",
    metadata: { name, namespace: ns },
    spec,
  });
  const post = async (object: unknown) => {
    const res = await env.cp.raw(`/apis/example.com/v1/namespaces/${ns}/gadgets`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(object),
    });
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  };

  it("finds the same five violations the server finds (or prunes), at the same paths, and defaults as it does", async () => {
    const validators = new CrdSchemaValidators();
    const validator = validators.for(crd, "v1");
    assert.equal(validators.for(crd, "v1"), validator, "compiled once per CRD generation");
    const cases: Array<{ name: string; spec: Record<string, unknown>; path: string; pruned?: boolean }> = [
      { name: "wrong-type", spec: { replicas: "three" }, path: "spec.replicas" },
      { name: "missing", spec: { mode: "fast" }, path: "spec.replicas" },
      { name: "enum", spec: { replicas: 1, mode: "reckless" }, path: "spec.mode" },
      { name: "pattern", spec: { replicas: 1, name: "Bad-Name" }, path: "spec.name" },
      { name: "unknown", spec: { replicas: 1, colour: "red" }, path: "spec.colour", pruned: true },
    ];
    for (const c of cases) {
      const object = gadget(c.name, c.spec);
      const ours = validator.validate(object);
      assert.equal(ours.valid, false, c.name);
      assert.deepEqual(
        ours.violations.map((v) => v.path),
        [c.path],
        `${c.name}: ${JSON.stringify(ours.violations)}`,
      );
      const server = await post(object);
      if (c.pruned) {
        assert.equal(server.status, 201, `${c.name}: the server accepts and prunes`);
        assert.equal((server.body["spec"] as Record<string, unknown>)["colour"], undefined);
      } else {
        assert.equal(server.status, 422, `${c.name}: ${JSON.stringify(server.body)}`);
        const causes = ((server.body["details"] as { causes?: Array<{ field?: string }> }).causes ?? []).map(
          (x) => x.field,
        );
        assert.ok(
          causes.includes(c.path),
          `${c.name}: the server names ${JSON.stringify(causes)}, we name ${c.path}`,
        );
      }
    }
    const valid = gadget("valid", {
      replicas: 2,
      port: "http",
      note: null,
      extra: { anything: { goes: 1 } },
    });
    const ours = validator.validate(valid);
    assert.deepEqual(ours.violations, []);
    const server = await post(valid);
    assert.equal(server.status, 201, JSON.stringify(server.body));
    assert.deepEqual(ours.defaulted.spec, server.body["spec"] as Record<string, unknown>);
    assert.equal((ours.defaulted.spec as { size?: string }).size, "M");
  });
});
