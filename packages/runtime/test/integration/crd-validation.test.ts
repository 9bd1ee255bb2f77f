// CRD schema validation on the client, compared with the real API server's.
import { strict as assert } from "node:assert";
import { eventually, useControlPlane } from "@tessera/testenv";
import { silentLogger } from "@tessera/core";
import { defineResource, type KubeObject } from "@tessera/client";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiClient, Manager, Tokens, type Condition } from "../../src/index.js";
import {
  CustomResourceDefinitions,
  readCrdFile,
  CrdSchemaValidator,
  CrdSchemaValidators,
  validatingReconciler,
  type CustomResourceDefinitionLike,
} from "../../src/validation.js";
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
                  // nullable does not let null past an enum that lacks it: the server refuses it too.
                  level: { type: "string", nullable: true, enum: ["low", "high"] },
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

  it("finds the same six violations the server finds (or prunes), at the same paths, and defaults as it does", async () => {
    const validators = new CrdSchemaValidators();
    // From the server, and from the file an operator ships: the same schema.
    const fromServer = await new ApiClient(env.cp.kubeConfig, { fieldManager: "test" }).get(
      CustomResourceDefinitions,
      {
        name: "gadgets.example.com",
      },
    );
    assert.ok(fromServer);
    const validator = validators.for(fromServer, "v1");
    assert.equal(validators.for(crd, "v1"), validator, "compiled once per CRD generation");
    const file = join(mkdtempSync(join(tmpdir(), "crd-")), "crds.yaml");
    writeFileSync(file, `${JSON.stringify({ kind: "Namespace" })}\n---\n${JSON.stringify(gadgetCrd)}\n`);
    const fromFile = new CrdSchemaValidators().for(readCrdFile(file, "gadgets.example.com"), "v1");
    const cases: Array<{ name: string; spec: Record<string, unknown>; path: string; pruned?: boolean }> = [
      { name: "wrong-type", spec: { replicas: "three" }, path: "spec.replicas" },
      { name: "missing", spec: { mode: "fast" }, path: "spec.replicas" },
      { name: "enum", spec: { replicas: 1, mode: "reckless" }, path: "spec.mode" },
      { name: "pattern", spec: { replicas: 1, name: "Bad-Name" }, path: "spec.name" },
      { name: "null-enum", spec: { replicas: 1, level: null }, path: "spec.level" },
      { name: "unknown", spec: { replicas: 1, colour: "red" }, path: "spec.colour", pruned: true },
    ];
    for (const c of cases) {
      const object = gadget(c.name, c.spec);
      const ours = validator.validate(object);
      assert.deepEqual(fromFile.validate(object).violations, ours.violations);
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

  it("validatingReconciler: invalid objects get Valid=False naming each violation, a Warning event, and no reconcile", async () => {
    // Installed lenient (the server keeps anything); validated against the strict schema the operator ships.
    const lenient = structuredClone(gadgetCrd) as typeof gadgetCrd & Record<string, unknown>;
    lenient.metadata.name = "doohickeys.example.com";
    lenient.spec.names = {
      kind: "Doohickey",
      plural: "doohickeys",
      singular: "doohickey",
      listKind: "DoohickeyList",
    };
    const version = lenient.spec.versions[0] as Record<string, unknown>;
    version["schema"] = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } };
    version["subresources"] = { status: {} };
    const res = await env.cp.raw("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(lenient),
    });
    assert.equal(res.status, 201, res.body);
    await eventually(
      "doohickeys are served",
      async () => (await env.cp.raw("/apis/example.com/v1/doohickeys")).status === 200,
    );
    type Doohickey = KubeObject & { status?: { conditions?: Condition[] } };
    const Doohickeys = defineResource<Doohickey>({
      group: "example.com",
      version: "v1",
      kind: "Doohickey",
      plural: "doohickeys",
      scope: "Namespaced",
    });
    const shipped = structuredClone(gadgetCrd.spec.versions[0]!.schema.openAPIV3Schema) as Record<
      string,
      unknown
    >;
    (shipped["properties"] as Record<string, unknown>)["status"] = {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    };
    const strict = new CrdSchemaValidator(shipped);
    const bad: Record<string, [Record<string, unknown>, string]> = {
      "wrong-type": [{ replicas: "three" }, "spec.replicas"],
      missing: [{ mode: "fast" }, "spec.replicas"],
      enum: [{ replicas: 1, mode: "reckless" }, "spec.mode"],
      pattern: [{ replicas: 1, name: "Bad-Name" }, "spec.name"],
      unknown: [{ replicas: 1, colour: "red" }, "spec.colour"],
    };
    for (const [name, [spec]] of [...Object.entries(bad), ["good", [{ replicas: 1 }, ""]] as const]) {
      const created = await env.cp.raw(`/apis/example.com/v1/namespaces/${ns}/doohickeys`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          apiVersion: "example.com/v1",
          kind: "Doohickey",
          metadata: { name, namespace: ns },
          spec,
        }),
      });
      assert.equal(created.status, 201, created.body);
    }
    const reconciled: string[] = [];
    const manager = await Manager.create({
      config: { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      .for(Doohickeys)
      .complete(
        validatingReconciler<Doohickey>((request) => void reconciled.push(request.name), {
          resource: Doohickeys,
          validator: () => strict,
          client: manager.get(Tokens.ApiClient),
          events: manager.get(Tokens.EventRecorder),
          clock: manager.get(Tokens.Clock),
        }),
      );
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      const valid = async (name: string) => {
        const got = JSON.parse(
          (await env.cp.raw(`/apis/example.com/v1/namespaces/${ns}/doohickeys/${name}`)).body,
        ) as Doohickey;
        return got.status?.conditions?.find((c) => c.type === "Valid");
      };
      await eventually("every Doohickey has a Valid condition", async () => {
        for (const name of [...Object.keys(bad), "good"]) if (!(await valid(name))) return false;
        return true;
      });
      for (const [name, [, path]] of Object.entries(bad)) {
        const condition = (await valid(name))!;
        assert.equal(condition.status, "False", name);
        assert.equal(condition.reason, "SchemaViolation");
        assert.match(
          condition.message,
          new RegExp(`^${path.replace(".", "\\.")}: `),
          `${name}: ${condition.message}`,
        );
      }
      assert.equal((await valid("good"))?.status, "True");
      assert.deepEqual([...new Set(reconciled)], ["good"], "only the valid object is reconciled");
      await eventually("a Warning event per invalid object", async () => {
        const events = JSON.parse(
          (await env.cp.raw(`/apis/events.k8s.io/v1/namespaces/${ns}/events`)).body,
        ) as {
          items: Array<{ reason?: string; type?: string; regarding?: { name?: string } }>;
        };
        const named = events.items
          .filter((e) => e.reason === "SchemaViolation" && e.type === "Warning")
          .map((e) => e.regarding?.name);
        return Object.keys(bad).every((n) => named.includes(n));
      });
    } finally {
      stop.abort();
      await running;
    }
  });
});
