// Secure serving of /metrics over the real API server: HTTPS with a
// self-signed or given certificate, scrapes authenticated by TokenReview and
// authorized by SubjectAccessReview (RBAC on the non-resource URL /metrics),
// and the decision cache on an injected clock.
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { request, type RequestOptions } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PeerCertificate, TLSSocket } from "node:tls";
import { ContainerModule } from "inversify";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { eventually, parsePrometheusText, useControlPlane, type ControlPlane } from "@tessera/testenv";
import type { KubeConfigLike } from "@tessera/client";
import { KubeTransport, LeanKubeConfig, type ApiErrorContext, type TransportRequest } from "@tessera/client";
import { Manager, Tokens, type ManagerConfigInput } from "../../src/index.js";
import {
  selfSignedCertificate,
  SubjectAccessReviewAuthorizer,
  TokenReviewAuthenticator,
} from "../../src/server.js";
import { LedgerToken, WidgetReconciler } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

const json = { "Content-Type": "application/json" };

async function send(cp: ControlPlane, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await cp.raw(path, {
    method,
    headers: json,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body);
}

interface Scrape {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  peer: PeerCertificate;
}

/** GET over HTTPS. The self-signed certificate is not trusted: verification is skipped here, in the test only. */
function scrape(port: number, options: { token?: string; tls?: RequestOptions } = {}): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/metrics",
        rejectUnauthorized: false,
        ...options.tls,
        ...(options.token !== undefined ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, peer }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("Secure metrics (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const stops: Array<() => Promise<void>> = [];
  let ns = "";
  const tokens: Record<string, string> = {};

  before(async () => {
    const cp = env.cp;
    await installWidgetCrd(cp);
    ns = await createNamespace(cp, "metrics-auth");
    await send(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: `${ns}-metrics-reader` },
      rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    });
    for (const sa of ["scraper", "stranger", "cached", "no-reviews"]) {
      await send(cp, "POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } });
    }
    for (const sa of ["scraper", "cached"]) await bindReader(sa);
    for (const sa of ["scraper", "stranger", "cached", "no-reviews"]) {
      const res = (await send(cp, "POST", `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {},
      })) as { status: { token: string } };
      tokens[sa] = res.status.token;
    }
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const bindReader = (sa: string) =>
    send(env.cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: `${ns}-${sa}-metrics` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${ns}-metrics-reader` },
      subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
    });

  /** Whether RBAC, as the API server sees it now, lets `sa` get /metrics. */
  const rbacAllows = async (sa: string) => {
    const review = (await send(env.cp, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      spec: {
        user: `system:serviceaccount:${ns}:${sa}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
        nonResourceAttributes: { path: "/metrics", verb: "get" },
      },
    })) as { status?: { allowed?: boolean } };
    return review.status?.allowed === true;
  };

  async function startManager(
    config: ManagerConfigInput,
    options: { kubeConfig?: KubeConfigLike; widgets?: boolean; logger?: CapturingLogger } = {},
  ) {
    const manager = await Manager.create({
      config: {
        name: `metrics-${Math.random().toString(36).slice(2, 7)}`,
        mode: "every-replica",
        healthBindAddress: "127.0.0.1:0",
        metricsBindAddress: "127.0.0.1:0",
        ...config,
      },
      kubeConfig: options.kubeConfig ?? env.cp.kubeConfig,
      env: {},
    });
    if (options.logger) manager.rebind(Tokens.Logger, options.logger);
    if (options.widgets) {
      manager.register(
        new ContainerModule(({ bind }) => {
          bind(LedgerToken).toConstantValue({ started: () => {}, finished: () => {} });
        }),
      );
      manager.register(WidgetReconciler);
    }
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running;
    });
    const { metrics, health } = await manager.endpoints();
    assert.ok(metrics && health, "both servers listen");
    return { manager, metrics, health };
  }

  it("HTTPS with a self-signed certificate: 401 without a valid token, 403 for a service account RBAC does not allow, 200 and Prometheus text for one it does; probes stay plain HTTP", async () => {
    const logger = new CapturingLogger();
    const { manager, metrics, health } = await startManager(
      { metrics: { secure: true } },
      { widgets: true, logger },
    );
    // The controller's metrics exist once it is built: after its caches synced (the servers listen before).
    assert.ok(await manager.waitForSync(), "the manager synced");

    const none = await scrape(metrics.port);
    assert.equal(none.status, 401);
    assert.equal(none.headers["www-authenticate"], 'Bearer realm="metrics"');
    assert.equal(none.body, "Unauthorized: send a bearer token\n");
    // The certificate is self-signed, names the loopback address, and a verifying client refuses it.
    assert.deepEqual(none.peer.issuer, none.peer.subject);
    assert.match(none.peer.subjectaltname ?? "", /IP Address:127\.0\.0\.1/);
    await assert.rejects(scrape(metrics.port, { tls: { rejectUnauthorized: true } }), /self[- ]signed/);
    await assert.rejects(
      fetch(`http://127.0.0.1:${metrics.port}/metrics`),
      "no plain HTTP on the metrics port",
    );

    const forged = "not-a-token-the-cluster-knows";
    const bad = await scrape(metrics.port, { token: forged });
    assert.equal(bad.status, 401);
    assert.equal(bad.body, "Unauthorized\n");

    const stranger = await scrape(metrics.port, { token: tokens["stranger"]! });
    assert.equal(stranger.status, 403);
    assert.equal(
      stranger.body,
      `Forbidden: user "system:serviceaccount:${ns}:stranger" may not get /metrics\n`,
    );

    const allowed = await scrape(metrics.port, { token: tokens["scraper"]! });
    assert.equal(allowed.status, 200, allowed.body);
    assert.match(String(allowed.headers["content-type"]), /^text\/plain/);
    const families = parsePrometheusText(allowed.body);
    assert.equal(families.get("controller_runtime_max_concurrent_reconciles")?.type, "gauge");

    const healthz = await fetch(`http://127.0.0.1:${health.port}/healthz`);
    assert.equal(healthz.status, 200);
    assert.equal(await healthz.text(), "ok");

    const logged = JSON.stringify(logger.lines);
    for (const secret of [forged, ...Object.values(tokens)])
      assert.ok(!logged.includes(secret), "no token logged");
  });

  it("answers 500 and logs verb, resource and cause, without the token, when the API server refuses the review", async () => {
    // The operator's own service account lacks tokenreviews/create: what a user meets without the ClusterRole.
    const kubeConfig = new LeanKubeConfig(
      {
        name: "test",
        server: env.cp.apiserverUrl,
        skipTLSVerify: false,
        caData: Buffer.from(env.cp.caPem).toString("base64"),
      },
      { token: tokens["no-reviews"]! },
      ns,
      "test",
    );
    const logger = new CapturingLogger();
    const { metrics } = await startManager({ metrics: { secure: true } }, { kubeConfig, logger });
    const res = await scrape(metrics.port, { token: tokens["scraper"]! });
    assert.equal(res.status, 500);
    assert.equal(res.body, "Internal Server Error: could not review the request with the API server\n");
    const [line, ...more] = logger.matching(/could not review/, "error");
    assert.ok(line && more.length === 0, JSON.stringify(logger.lines));
    assert.equal(line.fields["verb"], "create");
    assert.equal(line.fields["resource"], "tokenreviews.authentication.k8s.io");
    assert.equal(line.fields["path"], "/metrics");
    assert.match(
      JSON.stringify(line.fields["error"]),
      /403 Forbidden.*cannot create resource \\"tokenreviews\\"/,
    );
    assert.ok(!JSON.stringify(logger.lines).includes(tokens["scraper"]!), "no token logged");
  });

  it("serves the certificate files given, and with auth off needs no token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tessera-metrics-tls-"));
    const given = selfSignedCertificate({
      hosts: ["127.0.0.1"],
      clock: new FakeClock({ wallTime: new Date() }),
    });
    writeFileSync(join(dir, "tls.crt"), given.certPem);
    writeFileSync(join(dir, "tls.key"), given.keyPem);
    const { metrics } = await startManager({
      metrics: { secure: true, certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key"), auth: false },
    });
    // Trusting exactly the given certificate, with verification on.
    const res = await scrape(metrics.port, { tls: { rejectUnauthorized: true, ca: given.certPem } });
    assert.equal(res.status, 200);
    assert.match(String(res.headers["content-type"]), /^text\/plain/);
  });

  it("refuses to start with a certificate file it cannot read, naming the file and the setting", async () => {
    const manager = await Manager.create({
      config: {
        mode: "every-replica",
        healthBindAddress: "0",
        metricsBindAddress: "127.0.0.1:0",
        metrics: { secure: true, certFile: "/nonexistent/tls.crt", keyFile: "/nonexistent/tls.key" },
        logLevel: "error",
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    const stop = new AbortController();
    try {
      await assert.rejects(
        manager.run(stop.signal),
        /metrics: cannot read the certificate file "\/nonexistent\/tls\.crt": ENOENT; check metrics\.certFile/,
      );
    } finally {
      stop.abort();
    }
  });

  it("caches reviews on its clock: one TokenReview per token a minute; an allow outlives a revoked binding 5 min, a deny a restored one 30 s", async () => {
    /** The real transport, counting the reviews it sends. */
    class CountingTransport extends KubeTransport {
      readonly sent: string[] = [];
      override call<T>(context: ApiErrorContext, request: TransportRequest): Promise<T> {
        this.sent.push(context.resource);
        return super.call(context, request);
      }
    }
    const transport = new CountingTransport(env.cp.kubeConfig);
    const clock = new FakeClock();
    const authenticator = new TokenReviewAuthenticator({ transport, clock });
    const authorizer = new SubjectAccessReviewAuthorizer({ transport, clock });
    const count = (plural: string) => transport.sent.filter((r) => r.startsWith(`${plural}.`)).length;

    const first = await authenticator.authenticate(tokens["cached"]!);
    assert.ok(first.authenticated);
    assert.equal(first.user.username, `system:serviceaccount:${ns}:cached`);
    assert.deepEqual(await authenticator.authenticate(tokens["cached"]!), first);
    assert.equal(count("tokenreviews"), 1, "the second scrape within a minute is answered from the cache");
    await clock.advance(60_000);
    await authenticator.authenticate(tokens["cached"]!);
    assert.equal(count("tokenreviews"), 2, "after a minute the token is reviewed again");

    const get = { path: "/metrics", verb: "get" };
    assert.equal((await authorizer.authorize(first.user, get)).allowed, true);
    await send(
      env.cp,
      "DELETE",
      `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${ns}-cached-metrics`,
    );
    await eventually("RBAC no longer allows it", async () => !(await rbacAllows("cached")));
    await clock.advance(299_999);
    assert.equal((await authorizer.authorize(first.user, get)).allowed, true, "the allow is cached 5 min");
    assert.equal(count("subjectaccessreviews"), 1);
    await clock.advance(1);
    assert.equal((await authorizer.authorize(first.user, get)).allowed, false);
    assert.equal(count("subjectaccessreviews"), 2);

    await bindReader("cached");
    await eventually("RBAC allows it again", () => rbacAllows("cached"));
    await clock.advance(29_999);
    assert.equal((await authorizer.authorize(first.user, get)).allowed, false, "the deny is cached 30 s");
    await clock.advance(1);
    assert.equal((await authorizer.authorize(first.user, get)).allowed, true);
    assert.equal(count("subjectaccessreviews"), 3);
    transport.close();
  });
});
