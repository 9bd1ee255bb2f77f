// Tokens, client keys and Secret data never reach logs, errors or traces: every
// error path the client, the kubeconfig loader and the manager have is driven
// against the real API server with distinctive credentials and a distinctive
// Secret value, all output is captured, and none of them may appear in it.
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { eventually, useControlPlane } from "@tessera/testenv";
import { JsonLogger } from "@tessera/core";
import { Secrets, loadKubeConfig } from "@tessera/client";
import type { V1Secret } from "@kubernetes/client-node";
import { ApiClient, Manager } from "../../src/index.js";
import { createNamespace } from "./support/widget-cluster.js";
import { capturingTracer } from "./support/capturing-tracer.js";

const CANARY_TOKEN = "tessera-canary-token-5e1f0a9b7c";
const SECRET_VALUE = "tessera-canary-secret-value-3d8c2b";
const SECRET_B64 = Buffer.from(SECRET_VALUE).toString("base64");

describe("secret redaction (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const dir = mkdtempSync(join(tmpdir(), "tessera-redaction-"));
  /** Everything written anywhere: log lines, stdout/stderr, error texts, spans. */
  const output: string[] = [];
  const logger = new JsonLogger({ level: "debug", write: (line) => output.push(line) });
  let adminToken = "";
  let limitedToken = "";
  let ns = "";
  const restore: Array<() => void> = [];

  /** Records an error every way a user or a log pipeline could see it. */
  function capture(error: unknown): void {
    logger.error("captured error", { error });
    output.push(String(error), inspect(error, { depth: Infinity, showHidden: true }));
    for (let e: unknown = error; e instanceof Error; e = e.cause) output.push(e.message, e.stack ?? "");
  }
  async function failing(what: string, action: () => Promise<unknown>): Promise<unknown> {
    try {
      await action();
    } catch (error) {
      capture(error);
      return error;
    }
    assert.fail(`${what} succeeded; the test needs it to fail`);
  }

  function kubeconfigFile(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>) {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: env.cp.apiserverUrl, ...cluster } }],
        users: [{ name: "u", user }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    return file;
  }
  const caData = () => Buffer.from(env.cp.caPem).toString("base64");
  const clientWithToken = async (token: string, cluster: Record<string, unknown> = {}) =>
    new ApiClient(
      await loadKubeConfig({
        file: kubeconfigFile(`token-${Math.random().toString(36).slice(2, 7)}`, cluster, { token }),
        env: {},
      }),
      { fieldManager: "redaction" },
    );
  const secret = (name: string, extra: Partial<V1Secret> = {}): V1Secret => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns },
    type: "Opaque",
    data: { password: SECRET_B64 },
    ...extra,
  });

  before(async () => {
    const cp = env.cp;
    const json = { "Content-Type": "application/json" };
    ns = await createNamespace(cp, "redaction");
    const tokenFor = async (name: string, admin: boolean) => {
      await cp.raw(`/api/v1/namespaces/${ns}/serviceaccounts`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ metadata: { name } }),
      });
      if (admin) {
        await cp.raw("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
          method: "POST",
          headers: json,
          body: JSON.stringify({
            metadata: { name: `${ns}-${name}` },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
          }),
        });
      }
      const res = await cp.raw(`/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} }),
      });
      return (JSON.parse(res.body) as { status: { token: string } }).status.token;
    };
    adminToken = await tokenFor("admin", true);
    limitedToken = await tokenFor("nobody", false);
    // stdout and stderr too: nothing may print a credential behind the logger's back.
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      stream.write = (chunk: unknown, ...rest: never[]) => {
        output.push(String(chunk));
        return write(chunk as string, ...rest);
      };
      restore.push(() => (stream.write = write));
    }
  });
  after(() => restore.splice(0).forEach((undo) => undo()));

  it("drives every error path and finds no token, client key or Secret value in any output", async () => {
    const admin = await clientWithToken(adminToken, { "certificate-authority-data": caData() });
    await admin.create(Secrets, secret("leaky"));
    const stored = (await admin.get(Secrets, { name: "leaky", namespace: ns }))!;

    // 401: a token the API server does not know.
    const stranger = await clientWithToken(CANARY_TOKEN, { "certificate-authority-data": caData() });
    assert.equal(
      ((await failing("401", () => stranger.get(Secrets, { name: "leaky", namespace: ns }))) as Error).name,
      "UnauthorizedError",
    );
    // 403: a valid token without RBAC, reading and writing the Secret.
    const nobody = await clientWithToken(limitedToken, { "certificate-authority-data": caData() });
    await failing("403 get", () => nobody.get(Secrets, { name: "leaky", namespace: ns }));
    await failing("403 update", () => nobody.update(Secrets, stored));
    await failing("403 create", () => nobody.create(Secrets, secret("other")));
    // 404, 409 (exists, stale), 422 (invalid name, immutable data) with the Secret in the body.
    await failing("404", () =>
      admin.update(
        Secrets,
        secret("missing", { metadata: { name: "missing", namespace: ns, resourceVersion: "1" } }),
      ),
    );
    await failing("409 exists", () => admin.create(Secrets, secret("leaky")));
    await admin.update(Secrets, { ...stored, data: { password: SECRET_B64, more: SECRET_B64 } });
    await failing("409 stale", () => admin.update(Secrets, stored));
    await failing("422 name", () => admin.create(Secrets, secret("Bad_Name")));
    await failing("422 key", () =>
      admin.create(Secrets, secret("bad-key", { data: { "not a key!": SECRET_B64 } })),
    );
    await admin.create(Secrets, secret("frozen", { immutable: true }));
    const frozen = (await admin.get(Secrets, { name: "frozen", namespace: ns }))!;
    await failing("422 immutable", () =>
      admin.update(Secrets, {
        ...frozen,
        data: { password: Buffer.from(`${SECRET_VALUE}-2`).toString("base64") },
      }),
    );
    // 400: a Secret value that is not base64 (the server decodes `data`).
    await failing("400 base64", () =>
      admin.create(Secrets, secret("not-base64", { data: { password: `${SECRET_VALUE}!` } })),
    );

    // 500: a failing admission webhook (its URL refuses connections) on labelled Secrets.
    await env.cp.raw("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        metadata: { name: `${ns}-broken` },
        webhooks: [
          {
            name: "broken.redaction.tessera.dev",
            clientConfig: { url: "https://127.0.0.1:1/validate" },
            rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["secrets"] }],
            objectSelector: { matchLabels: { "redaction.tessera.dev/webhook": ns } },
            failurePolicy: "Fail",
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
            timeoutSeconds: 2,
          },
        ],
      }),
    });
    const hooked = (name: string) =>
      secret(name, { metadata: { name, namespace: ns, labels: { "redaction.tessera.dev/webhook": ns } } });
    let serverError: unknown;
    await eventually("the webhook is called", async () => {
      serverError = await failing("500", () => admin.create(Secrets, hooked(`hooked-${Date.now()}`))).catch(
        (error: unknown) => error,
      );
      return (serverError as { code?: number }).code === 500;
    });
    await env.cp.raw(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${ns}-broken`, {
      method: "DELETE",
    });

    // A KubeConfig itself, logged or printed, shows no credential.
    const withCredentials = await loadKubeConfig({
      file: kubeconfigFile(
        "printed",
        { "certificate-authority-data": caData() },
        {
          token: CANARY_TOKEN,
          "client-certificate-data": env.cp.kubeConfig.getCurrentUser()!.certData,
          "client-key-data": env.cp.kubeConfig.getCurrentUser()!.keyData,
        },
      ),
      env: {},
    });
    logger.debug("using this KubeConfig", { kubeConfig: withCredentials });
    output.push(
      inspect(withCredentials, { depth: Infinity, showHidden: true }),
      JSON.stringify(withCredentials),
    );

    // Below HTTP: a refused connection and a failed TLS verification, each with a token configured.
    const refused = new ApiClient(
      await loadKubeConfig({
        file: kubeconfigFile("refused", { server: "https://127.0.0.1:1" }, { token: CANARY_TOKEN }),
        env: {},
      }),
      { fieldManager: "redaction" },
    );
    await failing("refused", () => refused.update(Secrets, stored));
    const untrusted = await clientWithToken(CANARY_TOKEN); // no CA: the server's certificate is not trusted
    await failing("tls", () => untrusted.update(Secrets, stored));

    // Bad kubeconfig files holding the token and the client key.
    const keyData = env.cp.kubeConfig.getCurrentUser()!.keyData!;
    // A YAML error quotes the lines around it: the credential's line comes right before the break.
    for (const [name, line] of [
      ["bad-token", `token: ${CANARY_TOKEN}`],
      ["bad-key", `client-key-data: ${keyData}`],
    ] as const) {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, `apiVersion: v1\nusers:\n- name: u\n  user:\n    ${line}\n   broken: [\n`);
      await failing(name, () => loadKubeConfig({ file, env: {} }));
    }
    const noContext = join(dir, "no-context.yaml");
    writeFileSync(
      noContext,
      JSON.stringify({
        users: [{ name: "u", user: { token: CANARY_TOKEN, "client-key-data": keyData } }],
        "current-context": "gone",
      }),
    );
    await failing("no context", () => loadKubeConfig({ file: noContext, env: {} }));
    const insecure = kubeconfigFile(
      "insecure",
      { "insecure-skip-tls-verify": true },
      { token: CANARY_TOKEN, "client-key-data": keyData },
    );
    await failing("insecure", () => loadKubeConfig({ file: insecure, env: {} }));

    // The manager at debug level, authenticated by the token: a reconcile that logs the
    // Secret and throws an error carrying it, traced.
    const { tracer, spans } = capturingTracer();
    const manager = await Manager.create({
      config: {
        name: "redaction",
        namespace: ns,
        mode: "every-replica",
        logLevel: "debug",
        healthBindAddress: "0",
        metricsBindAddress: "0",
      },
      kubeConfig: await loadKubeConfig({
        file: kubeconfigFile("manager", { "certificate-authority-data": caData() }, { token: adminToken }),
        env: {},
      }),
      env: {},
      logger,
      tracer,
    });
    let failures = 0;
    manager
      .controller()
      .for(Secrets)
      .complete((request, ctx) => {
        const seen = ctx.current();
        if (request.namespace !== ns || request.name !== "leaky" || !seen) return Promise.resolve();
        ctx.logger.info("reconciling the Secret", { object: seen });
        failures++;
        const error = Object.assign(new Error("cannot use this Secret"), { object: seen, secrets: [seen] });
        return Promise.reject(error);
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await eventually("the reconcile failed twice", () => failures >= 2);
    } finally {
      stop.abort();
      await running;
    }
    // A manager whose token may not list Secrets: the reflector's LIST errors, then a failed start-up.
    const blind = await Manager.create({
      config: {
        name: "redaction-blind",
        namespace: ns,
        mode: "every-replica",
        logLevel: "debug",
        healthBindAddress: "0",
        metricsBindAddress: "0",
        cache: { syncTimeoutMs: 3000 },
      },
      kubeConfig: await loadKubeConfig({
        file: kubeconfigFile("blind", { "certificate-authority-data": caData() }, { token: limitedToken }),
        env: {},
      }),
      env: {},
      logger,
      tracer,
    });
    blind
      .controller()
      .for(Secrets)
      .complete(() => Promise.resolve());
    await failing("a manager that cannot list", () => blind.run(AbortSignal.timeout(30_000)));
    output.push(JSON.stringify(spans));
    assert.ok(
      spans.some((s) => s.exceptions.some((e) => e.message === "cannot use this Secret")),
      "no span recorded the error",
    );

    const all = output.join("\n");
    const keyPem = Buffer.from(keyData, "base64").toString("utf8");
    const keyBody = keyPem.split("\n").filter((l) => l && !l.startsWith("-----"));
    const forbidden: Record<string, string> = {
      "the canary token": CANARY_TOKEN,
      "the admin service account's token": adminToken,
      "the limited service account's token": limitedToken,
      "the client key (base64 of its PEM)": keyData.slice(20, 80),
      "the client key (a PEM line)": keyBody[1]!,
      "the Secret's value": SECRET_VALUE,
      "the Secret's value in base64": SECRET_B64,
    };
    for (const [what, value] of Object.entries(forbidden)) {
      const at = all.indexOf(value);
      assert.equal(at, -1, `${what} leaked: ...${all.slice(Math.max(0, at - 300), at + 100)}...`);
    }

    // The net was wide: it holds the errors, the manager's logs and the Secret's redaction.
    assert.ok(/UnauthorizedError/.test(all), "the output lacks /UnauthorizedError/");
    assert.ok(/ForbiddenError/.test(all), "the output lacks /ForbiddenError/");
    assert.ok(/ConflictError/.test(all), "the output lacks /ConflictError/");
    assert.ok(/InvalidError/.test(all), "the output lacks /InvalidError/");
    assert.ok(/: 500 InternalError/.test(all), "the output lacks a 500");
    assert.ok(/cannot list resource \\?"secrets\\?"/.test(all), "the output lacks the reflector's 403");
    assert.ok(/ECONNREFUSED/.test(all), "the output lacks /ECONNREFUSED/");
    assert.ok(/certificate/.test(all), "the output lacks /certificate/");
    assert.ok(/reconciling the Secret/.test(all), "the output lacks /reconciling the Secret/");
    assert.ok(/\[redacted 2 keys\]/.test(all), "the Secret was not logged redacted");
  });
});
