import { strict as assert } from "node:assert";
import { EndpointServer, HealthChecks, parseBindAddress } from "../src/server.js";
import { labelMatcher, LabelSelectorError } from "@tessera/client";

describe("parseBindAddress", () => {
  it("reads controller-runtime's forms; 0 turns the server off", () => {
    assert.deepEqual(parseBindAddress(":8080", "x"), { host: undefined, port: 8080 });
    assert.deepEqual(parseBindAddress("127.0.0.1:0", "x"), { host: "127.0.0.1", port: 0 });
    assert.deepEqual(parseBindAddress("[::1]:9090", "x"), { host: "::1", port: 9090 });
    assert.equal(parseBindAddress("0", "x"), undefined);
  });
  it("says what it accepts", () => {
    assert.throws(
      () => parseBindAddress("8080", "metricsBindAddress"),
      /metricsBindAddress: bind address "8080" is not "host:port", ":port" or "0"/,
    );
    assert.throws(() => parseBindAddress(":70000", "x"), /is not/);
  });
});

describe("HealthChecks", () => {
  it("answers 200 ok when every check passes, 500 naming each failure, verbose lists all", async () => {
    const checks = new HealthChecks();
    let cacheOk = true;
    checks.addReadyCheck("informers", () =>
      cacheOk ? { ok: true } : { ok: false, reason: "configmaps not synced" },
    );
    checks.addReadyCheck("lease", () => ({ ok: true }));
    checks.addReadyCheck("throws", () => {
      throw new Error("boom");
    });
    assert.deepEqual(await checks.probe("readyz", { only: "lease" }), { status: 200, body: "ok" });
    const failing = await checks.probe("readyz");
    assert.equal(failing.status, 500);
    assert.equal(failing.body, "[-]throws failed: boom\nreadyz check failed\n");
    cacheOk = false;
    const verbose = await checks.probe("readyz", { verbose: true });
    assert.match(
      verbose.body,
      /\[-\]informers failed: configmaps not synced\n\[\+\]lease ok\n\[-\]throws failed: boom/,
    );
    assert.equal((await checks.probe("readyz", { only: "nope" })).status, 404);
    assert.deepEqual(await checks.probe("healthz"), { status: 200, body: "ok" });
  });
});

describe("EndpointServer", () => {
  it("serves its routes on a chosen port until its signal aborts, and says why it cannot listen", async () => {
    const stop = new AbortController();
    const server = new EndpointServer({
      name: "probes",
      address: { host: "127.0.0.1", port: 0 },
      routes: new Map([["/healthz", (_req, res) => void res.end("fine")]]),
    });
    const running = server.run(stop.signal);
    const address = await server.listening();
    assert.ok(address);
    assert.equal(await (await fetch(`http://127.0.0.1:${address.port}/healthz`)).text(), "fine");
    assert.equal((await fetch(`http://127.0.0.1:${address.port}/healthz/x`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${address.port}/other`)).status, 404);
    const clash = new EndpointServer({
      name: "metrics",
      address: { host: "127.0.0.1", port: address.port },
      routes: new Map(),
    });
    await assert.rejects(
      clash.run(stop.signal),
      /metrics: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.*"0" to turn this server off/,
    );
    stop.abort();
    await running;
  });
});

describe("labelMatcher", () => {
  it("speaks the API server's selector grammar", () => {
    const m = labelMatcher("app=web, tier in (front,back),env!=prod,!legacy,team");
    assert.equal(m({ app: "web", tier: "front", env: "dev", team: "a" }), true);
    assert.equal(m({ app: "web", tier: "db", team: "a" }), false);
    assert.equal(m({ app: "web", tier: "back", env: "prod", team: "a" }), false);
    assert.equal(m({ app: "web", tier: "back", legacy: "1", team: "a" }), false);
    assert.equal(m({ app: "web", tier: "back" }), false);
    assert.equal(labelMatcher("x notin (a)")({}), true);
    assert.equal(labelMatcher({ app: "web" })({ app: "web", x: "y" }), true);
    assert.throws(() => labelMatcher("app=~web"), LabelSelectorError);
  });
});
