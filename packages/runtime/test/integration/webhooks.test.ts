// Admission and conversion webhooks served by a manager, called by the real
// kube-apiserver (installWebhooks points it at the test process).
import { strict as assert } from "node:assert";
import { request as httpRequest } from "node:http";
import { silentLogger } from "@tessera/core";
import { ApiError, KubeTransport } from "@tessera/client";
import {
  eventually,
  installCrds,
  installWebhooks,
  parsePrometheusText,
  simpleCrd,
  sumSamples,
  useControlPlane,
  type InstalledWebhooks,
  type LocalWebhook,
} from "@tessera/testenv";
import {
  Admission,
  ApiClient,
  defineResource,
  Manager,
  type AdmissionContext,
  type AdmissionWebhookPlugin,
  type KubeObject,
  type WebhookBuilder,
} from "../../src/index.js";
import { webhookDefinitionOf, type AdmissionWebhookDefinition } from "../../src/codegen.js";
import { createNamespace } from "./support/widget-cluster.js";
import {
  tankConversion,
  tankCrd,
  TanksV1,
  TanksV1alpha1,
  type TankV1,
  type TankV1alpha1,
} from "../support/tanks.js";

interface Gizmo extends KubeObject {
  spec?: { replicas?: number; tier?: string };
}
const Gizmos = defineResource<Gizmo>({
  group: "webhooks.example.com",
  version: "v1",
  kind: "Gizmo",
  plural: "gizmos",
  scope: "Namespaced",
});
interface Doodad extends KubeObject {
  spec?: { value?: number };
}
const Doodads = defineResource<Doodad>({
  group: "webhooks.example.com",
  version: "v1",
  kind: "Doodad",
  plural: "doodads",
  scope: "Namespaced",
});

/** What the webhook saw, for the dryRun and user assertions. */
const seen: { name: string; dryRun: boolean; username: string | undefined }[] = [];

class GizmoWebhook implements AdmissionWebhookPlugin<Gizmo> {
  webhook(on: WebhookBuilder) {
    return on.for(Gizmos, { timeoutSeconds: 5 });
  }
  default(gizmo: Gizmo) {
    gizmo.spec = { tier: "standard", ...gizmo.spec };
    return gizmo;
  }
  validateCreate(gizmo: Gizmo, ctx: AdmissionContext<Gizmo>) {
    seen.push({ name: gizmo.metadata?.name ?? "", dryRun: ctx.dryRun, username: ctx.userInfo.username });
    return this.check(gizmo);
  }
  validateUpdate(gizmo: Gizmo) {
    return this.check(gizmo);
  }
  private check(gizmo: Gizmo) {
    const replicas = gizmo.spec?.replicas ?? 1;
    if (replicas < 1) {
      return Admission.deny("a Gizmo needs a replica", {
        causes: [{ field: "spec.replicas", message: "must be at least 1" }],
      });
    }
    return Admission.allow({
      warnings: replicas > 10 ? [`${replicas} replicas is more than a Gizmo needs`] : [],
    });
  }
}

/** The webhooks of a definition as installWebhooks takes them: what `tessera generate` writes, in short. */
function localWebhooks(definition: AdmissionWebhookDefinition, plural: string, name: string) {
  const rule = (operations: LocalWebhook["rules"][number]["operations"]) => ({
    apiGroups: [definition.for.group],
    apiVersions: [definition.for.version],
    resources: [plural],
    operations,
  });
  const common = { failurePolicy: definition.failurePolicy, timeoutSeconds: definition.timeoutSeconds };
  return {
    mutating: definition.mutatingPath
      ? [{ name: `m${name}`, path: definition.mutatingPath, rules: [rule(["CREATE", "UPDATE"])], ...common }]
      : [],
    validating: definition.validatingPath
      ? [
          {
            name: `v${name}`,
            path: definition.validatingPath,
            rules: [rule([...definition.operations])],
            ...common,
          },
        ]
      : [],
  };
}

const spec = <T extends KubeObject>(o: T | undefined) => (o as { spec?: unknown } | undefined)?.spec;

describe("webhooks (against the real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  // Nested, so that its after hook (stop the manager, uninstall) runs before the control plane stops.
  describe("served by a manager", () => {
    let ns = "";
    let installed: InstalledWebhooks;
    let stop: AbortController;
    let running: Promise<void>;
    let manager: Manager;
    const warnings: string[] = [];
    let client: ApiClient;

    before(async () => {
      await installCrds(
        env.cp,
        simpleCrd({ group: "webhooks.example.com", kind: "Gizmo" }),
        simpleCrd({ group: "webhooks.example.com", kind: "Doodad" }),
        tankCrd,
      );
      ns = await createNamespace(env.cp, "webhooks");
      const definition = webhookDefinitionOf(GizmoWebhook.prototype) as AdmissionWebhookDefinition;
      installed = await installWebhooks(env.cp, {
        ...localWebhooks(definition, "gizmos", ".gizmo.tessera.test"),
        conversions: [tankCrd.metadata.name],
      });
      manager = await Manager.create({
        config: {
          mode: "every-replica",
          healthBindAddress: "0",
          metricsBindAddress: "127.0.0.1:0",
          webhookBindAddress: installed.bindAddress,
          webhook: { certDir: installed.certDir },
        },
        kubeConfig: env.cp.kubeConfig,
        env: {},
        logger: silentLogger,
      });
      manager.register(GizmoWebhook).register(tankConversion);
      stop = new AbortController();
      running = manager.run(stop.signal);
      assert.equal((await manager.endpoints()).webhook?.port, installed.port);
      const transport = new KubeTransport(env.cp.kubeConfig, {
        onWarning: (warning) => warnings.push(warning),
      });
      client = new ApiClient(env.cp.kubeConfig, { fieldManager: "webhooks-test", transport });
      // The API server picks up new webhook configurations within a second or so.
      let probe = 0;
      await eventually("the mutating webhook is called", async () => {
        const created = await client.create(Gizmos, {
          metadata: { name: `probe-${probe++}`, namespace: ns },
          spec: { replicas: 1 },
        });
        return created.spec?.tier === "standard";
      });
    });

    after(async () => {
      stop?.abort();
      await running;
      await installed?.uninstall();
    });

    it("a defaulting webhook fills a field on create, seen on a GET", async () => {
      await client.create(Gizmos, {
        metadata: { name: "plain", namespace: ns },
        spec: { replicas: 2 },
      });
      const got = await client.get(Gizmos, { namespace: ns, name: "plain" });
      assert.deepEqual(got?.spec, { replicas: 2, tier: "standard" });
      // What the author set stays.
      await client.create(Gizmos, {
        metadata: { name: "gold", namespace: ns },
        spec: { replicas: 2, tier: "gold" },
      });
      assert.equal((await client.get(Gizmos, { namespace: ns, name: "gold" }))?.spec?.tier, "gold");
    });

    it("a validating webhook refuses with its message and field causes in the API error", async () => {
      const error = await client
        .create(Gizmos, { metadata: { name: "none", namespace: ns }, spec: { replicas: 0 } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.code, 422);
      assert.equal(error.reason, "Invalid");
      assert.match(
        error.message,
        /admission webhook "v\.gizmo\.tessera\.test" denied the request: a Gizmo needs a replica/,
      );
      assert.deepEqual(
        error.causes.map((c) => [c.field, c.message]),
        [["spec.replicas", "must be at least 1"]],
      );
      assert.equal(await client.get(Gizmos, { namespace: ns, name: "none" }), undefined);
      // On update too.
      await assert.rejects(
        client.patch(
          Gizmos,
          { namespace: ns, name: "plain" },
          { type: "merge", patch: { spec: { replicas: 0 } } },
        ),
        /a Gizmo needs a replica/,
      );
    });

    it("warnings reach the client as Warning headers", async () => {
      warnings.length = 0;
      await client.create(Gizmos, {
        metadata: { name: "many", namespace: ns },
        spec: { replicas: 12 },
      });
      assert.deepEqual(warnings, ["12 replicas is more than a Gizmo needs"]);
    });

    it("the webhook gets dryRun and the requesting user", async () => {
      await client.create(
        Gizmos,
        { metadata: { name: "dry", namespace: ns }, spec: { replicas: 1 } },
        {
          dryRun: true,
        },
      );
      assert.equal(await client.get(Gizmos, { namespace: ns, name: "dry" }), undefined);
      assert.deepEqual(
        seen.filter((s) => s.name === "dry" || s.name === "plain"),
        [
          { name: "plain", dryRun: false, username: "tessera-admin" },
          { name: "dry", dryRun: true, username: "tessera-admin" },
        ],
      );
    });

    it("counts requests by webhook and code in controller-runtime's metrics", async () => {
      const { metrics } = await manager.endpoints();
      const text = await new Promise<string>((resolve, reject) => {
        httpRequest({ host: "127.0.0.1", port: metrics!.port, path: "/metrics" }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve(body));
        })
          .on("error", reject)
          .end();
      });
      const families = parsePrometheusText(text);
      const validate = "/validate-webhooks-example-com-v1-gizmo";
      assert.ok(
        sumSamples(families, "controller_runtime_webhook_requests_total", {
          webhook: validate,
          code: "200",
        }) >= 4,
      );
      assert.ok(
        sumSamples(
          families,
          "controller_runtime_webhook_latency_seconds",
          { webhook: validate },
          "controller_runtime_webhook_latency_seconds_count",
        ) >= 4,
      );
      assert.equal(
        sumSamples(families, "controller_runtime_webhook_requests_in_flight", { webhook: validate }),
        0,
      );
    });

    describe("conversion: Tank v1alpha1 (stored) and v1", () => {
      const alpha = (name: string, size: number, image: string): TankV1alpha1 => ({
        metadata: { name, namespace: ns, labels: { made: "alpha" } },
        spec: { size, image },
      });
      const hub = (name: string, replicas: number, image: string): TankV1 => ({
        metadata: { name, namespace: ns },
        spec: { workload: { replicas, image } },
      });

      before(async () => {
        await client.create(TanksV1alpha1, alpha("a", 3, "nginx"));
        // Creating in v1 needs the conversion webhook (v1alpha1 is stored): the first tries may come before it is set.
        await eventually("a v1 Tank can be created", async () => {
          try {
            await client.create(TanksV1, hub("b", 5, "redis"));
            return true;
          } catch (error) {
            if (error instanceof ApiError && error.code === 409) return true;
            return false;
          }
        });
      });

      it("objects created in either version read back in the other", async () => {
        assert.deepEqual(spec(await client.get(TanksV1, { namespace: ns, name: "a" })), {
          workload: { replicas: 3, image: "nginx" },
        });
        const a = await client.get(TanksV1, { namespace: ns, name: "a" });
        assert.equal(a?.apiVersion, "conversion.example.com/v1");
        assert.deepEqual(a?.metadata?.labels, { made: "alpha" });
        assert.deepEqual(spec(await client.get(TanksV1alpha1, { namespace: ns, name: "b" })), {
          size: 5,
          image: "redis",
        });
      });

      it("a LIST in each version returns every object converted", async () => {
        const inV1 = await client.list(TanksV1, { namespace: ns });
        assert.deepEqual(
          inV1.map((t) => [t.metadata?.name, t.apiVersion, t.spec]),
          [
            ["a", "conversion.example.com/v1", { workload: { replicas: 3, image: "nginx" } }],
            ["b", "conversion.example.com/v1", { workload: { replicas: 5, image: "redis" } }],
          ],
        );
        const inAlpha = await client.list(TanksV1alpha1, { namespace: ns });
        assert.deepEqual(
          inAlpha.map((t) => [t.metadata?.name, t.apiVersion, t.spec]),
          [
            ["a", "conversion.example.com/v1alpha1", { size: 3, image: "nginx" }],
            ["b", "conversion.example.com/v1alpha1", { size: 5, image: "redis" }],
          ],
        );
      });

      it("changing the storage version to v1 and rewriting every object loses no field", async () => {
        const before = await client.list(TanksV1alpha1, { namespace: ns });
        const res = await env.cp.raw(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${tankCrd.metadata.name}`,
          {
            method: "PATCH",
            headers: { "content-type": "application/json-patch+json" },
            body: JSON.stringify([
              { op: "replace", path: "/spec/versions/0/storage", value: false },
              { op: "replace", path: "/spec/versions/1/storage", value: true },
            ]),
          },
        );
        assert.equal(res.status, 200, res.body);
        await eventually("v1 is the storage version", async () => {
          const crd = JSON.parse(
            (
              await env.cp.raw(
                `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${tankCrd.metadata.name}`,
              )
            ).body,
          ) as { status?: { storedVersions?: string[] } };
          return crd.status?.storedVersions?.includes("v1") === true;
        });
        await rewriteAll();
        const after = await client.list(TanksV1alpha1, { namespace: ns });
        assert.deepEqual(
          after.map((t) => [t.metadata?.name, t.metadata?.labels, t.spec]),
          before.map((t) => [t.metadata?.name, t.metadata?.labels, t.spec]),
        );
      });

      /** Reads every Tank in v1 and writes it back (an update stores it in the storage version). */
      async function rewriteAll(): Promise<void> {
        for (const tank of await client.list(TanksV1, { namespace: ns })) {
          await client.update(TanksV1, {
            ...tank,
            metadata: { ...tank.metadata, annotations: { rewritten: String(Date.now()) } },
          });
        }
      }
    });

    describe("the webhook down", () => {
      let down: InstalledWebhooks | undefined;
      afterEach(async () => {
        await down?.uninstall();
        down = undefined;
      });

      const doodadWebhook = (failurePolicy: "Fail" | "Ignore", name: string): LocalWebhook => ({
        name,
        path: "/validate-webhooks-example-com-v1-doodad",
        failurePolicy,
        rules: [
          {
            apiGroups: ["webhooks.example.com"],
            apiVersions: ["v1"],
            resources: ["doodads"],
            operations: ["CREATE", "UPDATE"],
          },
        ],
      });

      it("failurePolicy Fail: creates fail with the API server's message and nothing stored changes", async () => {
        const existing = await client.create(Doodads, {
          metadata: { name: "kept", namespace: ns },
          spec: { value: 1 },
        });
        // Nothing listens on the port installWebhooks chose: no server runs for it.
        down = await installWebhooks(env.cp, {
          validating: [doodadWebhook("Fail", "fail.doodad.tessera.test")],
        });
        let refusal: unknown;
        let attempt = 0;
        await eventually("creates are refused", async () => {
          try {
            await client.create(Doodads, {
              metadata: { name: `new-${attempt++}`, namespace: ns },
              spec: { value: 2 },
            });
            return false;
          } catch (error) {
            refusal = error;
            return true;
          }
        });
        assert.ok(refusal instanceof ApiError, String(refusal));
        assert.equal(refusal.code, 500);
        assert.match(
          refusal.message,
          /failed calling webhook "fail\.doodad\.tessera\.test": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/validate-webhooks-example-com-v1-doodad\?timeout=10s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused/,
        );
        await assert.rejects(
          client.patch(
            Doodads,
            { namespace: ns, name: "kept" },
            { type: "merge", patch: { spec: { value: 3 } } },
          ),
          /failed calling webhook/,
        );
        const now = await client.get(Doodads, { namespace: ns, name: "kept" });
        assert.equal(now?.metadata?.resourceVersion, existing.metadata?.resourceVersion);
        assert.deepEqual(now?.spec, { value: 1 });
        assert.equal(await client.get(Doodads, { namespace: ns, name: `new-${attempt - 1}` }), undefined);
      });

      it("failurePolicy Ignore: creates pass", async () => {
        down = await installWebhooks(env.cp, {
          validating: [doodadWebhook("Ignore", "ignore.doodad.tessera.test")],
        });
        const failedOpen = async () =>
          sumSamples(
            parsePrometheusText(await env.cp.metrics()),
            "apiserver_admission_webhook_fail_open_count",
            {
              name: "ignore.doodad.tessera.test",
            },
          );
        let attempt = 0;
        // Each create passes; once the API server calls the (absent) webhook, it counts the call as failed open.
        await eventually("a create passes with the webhook called and ignored", async () => {
          const created = await client.create(Doodads, {
            metadata: { name: `open-${attempt++}`, namespace: ns },
            spec: { value: 4 },
          });
          assert.deepEqual(created.spec, { value: 4 });
          return (await failedOpen()) > 0;
        });
        const afterwards = await client.create(Doodads, {
          metadata: { name: "open-last", namespace: ns },
          spec: { value: 5 },
        });
        assert.deepEqual(
          (await client.get(Doodads, { namespace: ns, name: "open-last" }))?.spec,
          afterwards.spec,
        );
      });
    });
  });
});
