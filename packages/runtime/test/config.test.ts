import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, configEnvironmentVariables, loadConfig } from "../src/config.js";

describe("loadConfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "tessera-config-"));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const noNamespaceFile = join(dir, "absent-namespace");

  it("fills every default from the name", () => {
    const config = loadConfig({ config: { name: "widgets" }, env: {}, namespaceFile: noNamespaceFile });
    assert.equal(config.fieldManager, "widgets");
    assert.equal(config.leaderElection.leaseName, "widgets-leader");
    assert.equal(config.sharding.ring, "widgets");
    assert.equal(config.namespace, "default");
    assert.equal(config.mode, "leader");
    assert.equal(config.shutdown.drainTimeoutMs, 30_000);
    assert.equal(config.healthBindAddress, ":8081");
    assert.equal(config.metricsBindAddress, ":8080");
    assert.equal(config.compression, "none");
    assert.equal(config.wire, "protobuf");
    // The host name, made a valid object name, and a random suffix: it names Leases.
    assert.match(config.identity, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-[0-9a-f]{8}$/);
    assert.equal(config.allowInsecureTLS, false);
  });

  it("reads allowInsecureTLS from TESSERA_ALLOW_INSECURE_TLS, true or false only", () => {
    const load = (value: string) =>
      loadConfig({ env: { TESSERA_ALLOW_INSECURE_TLS: value }, namespaceFile: noNamespaceFile });
    assert.equal(load("true").allowInsecureTLS, true);
    assert.equal(load("false").allowInsecureTLS, false);
    assert.throws(
      () => load("yes"),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.violations.some(
          (v) =>
            v.path === "/allowInsecureTLS" &&
            v.source === "TESSERA_ALLOW_INSECURE_TLS" &&
            v.found === '"yes"',
        ),
    );
  });

  it("takes the cache's namespaces and per-kind scope from code, a file and TESSERA_CACHE_*", () => {
    const defaults = loadConfig({ env: {}, namespaceFile: noNamespaceFile });
    assert.deepEqual(defaults.cache.namespaces, []);
    assert.deepEqual(defaults.cache.byKind, {});
    assert.equal(defaults.cache.lazy, false);
    const fromCode = loadConfig({
      config: { cache: { namespaces: ["team-a"], byKind: { secrets: { labels: "app=web" } } } },
      env: {},
      namespaceFile: noNamespaceFile,
    });
    assert.deepEqual(fromCode.cache.namespaces, ["team-a"]);
    assert.deepEqual(fromCode.cache.byKind, { secrets: { labels: "app=web" } });
    const fromEnv = loadConfig({
      env: {
        TESSERA_CACHE_NAMESPACES: " team-a, team-b ",
        TESSERA_CACHE_BY_KIND: '{"configmaps":{"namespaces":["team-a"],"fields":"metadata.name!=x"}}',
        TESSERA_CACHE_LAZY: "true",
      },
      namespaceFile: noNamespaceFile,
    });
    assert.deepEqual(fromEnv.cache.namespaces, ["team-a", "team-b"]);
    assert.deepEqual(fromEnv.cache.byKind, {
      configmaps: { namespaces: ["team-a"], fields: "metadata.name!=x" },
    });
    assert.equal(fromEnv.cache.lazy, true);
    assert.deepEqual(
      loadConfig({ env: { TESSERA_CACHE_NAMESPACES: "" }, namespaceFile: noNamespaceFile }).cache.namespaces,
      [],
    );
    assert.throws(
      () => loadConfig({ env: { TESSERA_CACHE_NAMESPACES: "Team_A" }, namespaceFile: noNamespaceFile }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.violations.some(
          (v) => v.path.startsWith("/cache/namespaces") && v.source === "TESSERA_CACHE_NAMESPACES",
        ),
    );
    assert.throws(
      () =>
        loadConfig({
          config: { cache: { byKind: { secrets: { label: "app=web" } as never } } },
          env: {},
          namespaceFile: noNamespaceFile,
        }),
      ConfigError,
    );
  });

  it("layers code, then the file, then TESSERA_* variables; the environment wins", () => {
    const path = file(
      "layers.yaml",
      "name: from-file\nmode: sharded\nleaderElection:\n  leaseDurationMs: 20000\n  retryPeriodMs: 1000\n",
    );
    const config = loadConfig({
      config: { name: "from-code", logLevel: "debug", leaderElection: { leaseDurationMs: 9000 } },
      file: path,
      env: {
        TESSERA_MODE: "every-replica",
        TESSERA_COMPRESSION: "gzip",
        TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "1500",
        TESSERA_CONTROLLERS: '{"widget":{"concurrency":4}}',
        TESSERA_CONTROLPLANE_DIR: "/not/ours", // other TESSERA_ variables are not configuration
      },
      namespaceFile: noNamespaceFile,
    });
    assert.equal(config.name, "from-file");
    assert.equal(config.logLevel, "debug");
    assert.equal(config.mode, "every-replica");
    assert.equal(config.compression, "gzip");
    assert.equal(config.leaderElection.leaseDurationMs, 20_000);
    assert.equal(config.leaderElection.retryPeriodMs, 1500);
    assert.deepEqual(config.controllers, { widget: { concurrency: 4 } });
  });

  it("takes controllers.<name>.maxBackoffMs and cache.readYourWritesMs from the file and the environment, and refuses a zero backoff", () => {
    const path = file(
      "backoff.yaml",
      "controllers:\n  widget:\n    maxBackoffMs: 30000\n    maxIntervalMs: 60000\ncache:\n  readYourWritesMs: 2000\n",
    );
    const fromFile = loadConfig({ file: path, env: {}, namespaceFile: noNamespaceFile });
    assert.deepEqual(fromFile.controllers, { widget: { maxBackoffMs: 30_000, maxIntervalMs: 60_000 } });
    assert.equal(fromFile.cache.readYourWritesMs, 2000);
    const defaults = loadConfig({ config: { name: "widgets" }, env: {}, namespaceFile: noNamespaceFile });
    assert.equal(defaults.cache.readYourWritesMs, 0);
    const fromEnv = loadConfig({
      env: {
        TESSERA_CONTROLLERS: '{"widget":{"maxBackoffMs":5000}}',
        TESSERA_CACHE_READ_YOUR_WRITES_MS: "500",
      },
      namespaceFile: noNamespaceFile,
    });
    assert.equal(fromEnv.controllers["widget"]?.maxBackoffMs, 5000);
    assert.equal(fromEnv.cache.readYourWritesMs, 500);
    assert.throws(
      () =>
        loadConfig({
          config: { controllers: { widget: { maxBackoffMs: 0 } } },
          env: {},
          namespaceFile: noNamespaceFile,
        }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /controllers\/widget\/maxBackoffMs: expected a number >= 1/.test(error.message),
    );
  });

  it("reads the file named by TESSERA_CONFIG, JSON too", () => {
    const path = file("c.json", JSON.stringify({ sharding: { slots: 64 } }));
    const config = loadConfig({ env: { TESSERA_CONFIG: path }, namespaceFile: noNamespaceFile });
    assert.equal(config.sharding.slots, 64);
  });

  it("takes the namespace from POD_NAMESPACE, else the service account's namespace file", () => {
    const ns = file("namespace", "operators\n");
    assert.equal(loadConfig({ env: {}, namespaceFile: ns }).namespace, "operators");
    assert.equal(loadConfig({ env: { POD_NAMESPACE: "pods" }, namespaceFile: ns }).namespace, "pods");
    assert.equal(loadConfig({ env: { POD_NAME: "op-0" }, namespaceFile: ns }).identity, "op-0");
  });

  it("lists every violation at once with path, expectation, value and source", () => {
    const path = file(
      "bad.yaml",
      "mode: primary\nsharding:\n  slots: 100\nleaderElection:\n  leaseDurationMs: 5\n  colour: red\n",
    );
    let error: unknown;
    try {
      loadConfig({
        config: { name: "Bad_Name" },
        file: path,
        env: { TESSERA_SHUTDOWN_DRAIN_TIMEOUT_MS: "soon", TESSERA_METRICS_BIND_ADDRESS: "8080" },
        namespaceFile: noNamespaceFile,
      });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.exitCode, 2);
    const byPath = new Map(error.violations.map((v) => [v.path, v]));
    assert.deepEqual([...byPath.keys()].sort(), [
      "/leaderElection/colour",
      "/leaderElection/leaseDurationMs",
      "/metricsBindAddress",
      "/mode",
      "/name",
      "/sharding/slots",
      "/shutdown/drainTimeoutMs",
    ]);
    assert.equal(byPath.get("/mode")!.found, '"primary"');
    assert.match(byPath.get("/mode")!.expected, /"leader", "sharded", "every-replica"/);
    assert.equal(byPath.get("/mode")!.source, path);
    assert.equal(byPath.get("/shutdown/drainTimeoutMs")!.source, "TESSERA_SHUTDOWN_DRAIN_TIMEOUT_MS");
    assert.equal(byPath.get("/shutdown/drainTimeoutMs")!.expected, "an integer");
    assert.equal(byPath.get("/name")!.source, "code");
    assert.match(byPath.get("/sharding/slots")!.expected, /power of two/);
    assert.equal(byPath.get("/leaderElection/colour")!.found, "an unknown field");
    assert.match(byPath.get("/leaderElection/leaseDurationMs")!.expected, />= 1000/);
    assert.match(error.message, /7 problems/);
    assert.match(error.message, /\/mode: expected one of .* found "primary" \(from .*bad\.yaml\)/);
  });

  it("checks the election durations against each other", () => {
    assert.throws(
      () =>
        loadConfig({
          config: { leaderElection: { leaseDurationMs: 5000, renewDeadlineMs: 6000 } },
          env: {},
          namespaceFile: noNamespaceFile,
        }),
      (e: unknown) =>
        e instanceof ConfigError && e.violations.some((v) => v.path === "/leaderElection/renewDeadlineMs"),
    );
    // The elector needs renewDeadline > 1.2 retry periods; the config says so, not the elector at run time.
    const load = (retryPeriodMs: number) =>
      loadConfig({
        config: { leaderElection: { leaseDurationMs: 15000, renewDeadlineMs: 10000, retryPeriodMs } },
        env: {},
        namespaceFile: noNamespaceFile,
      });
    assert.equal(load(8333).leaderElection.retryPeriodMs, 8333);
    assert.throws(
      () => load(9000),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.violations.some(
          (v) => v.path === "/leaderElection/retryPeriodMs" && /at most 8333/.test(v.expected),
        ),
    );
  });

  it("refuses an identity that cannot name a Lease, saying where it came from", () => {
    for (const [input, source] of [
      [{ env: { POD_NAME: "Op_0" } }, "POD_NAME"],
      [{ env: {}, config: { identity: "replica_1" } }, "code"],
    ] as const) {
      assert.throws(
        () => loadConfig({ ...input, namespaceFile: noNamespaceFile }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.violations.some(
            (v) => v.path === "/identity" && v.source === source && /RFC 1123/.test(v.expected),
          ),
      );
    }
  });

  it("says what is wrong with a file that cannot be read or parsed", () => {
    const broken = file("broken.yaml", "mode: [unclosed\n");
    // The parser only warns about an unknown tag; a configuration must not mean something other than it says.
    const tagged = file("tagged.yaml", "name: !secret widgets\n");
    for (const path of [broken, tagged, join(dir, "missing.yaml")]) {
      assert.throws(
        () => loadConfig({ file: path, env: {}, namespaceFile: noNamespaceFile }),
        (e: unknown) => e instanceof ConfigError && e.violations[0]!.source === path,
      );
    }
  });

  it("serves metrics as today unless secure is set; secure moves them to :8443 with auth on", () => {
    const load = (env: Record<string, string>, config = {}) =>
      loadConfig({ config, env, namespaceFile: noNamespaceFile });
    const plain = load({});
    assert.deepEqual(plain.metrics, { secure: false, auth: false });
    assert.equal(plain.metricsBindAddress, ":8080");
    const secure = load({ TESSERA_METRICS_SECURE: "true" });
    assert.deepEqual(secure.metrics, { secure: true, auth: true });
    assert.equal(secure.metricsBindAddress, ":8443");
    assert.equal(secure.healthBindAddress, ":8081", "probes stay where they were");
    const files = load(
      { TESSERA_METRICS_AUTH: "false", TESSERA_METRICS_BIND_ADDRESS: "127.0.0.1:9443" },
      { metrics: { secure: true, certFile: "/certs/tls.crt", keyFile: "/certs/tls.key" } },
    );
    assert.deepEqual(files.metrics, {
      secure: true,
      certFile: "/certs/tls.crt",
      keyFile: "/certs/tls.key",
      auth: false,
    });
    assert.equal(files.metricsBindAddress, "127.0.0.1:9443");
  });

  it("refuses half a certificate, a certificate without secure, and a secure that is not a boolean", () => {
    const violations = (env: Record<string, string>) => {
      try {
        loadConfig({ env, namespaceFile: noNamespaceFile });
      } catch (e) {
        assert.ok(e instanceof ConfigError, String(e));
        return e.violations;
      }
      assert.fail("accepted");
    };
    assert.deepEqual(
      violations({ TESSERA_METRICS_SECURE: "true", TESSERA_METRICS_CERT_FILE: "/c/tls.crt" }),
      [
        {
          path: "/metrics/keyFile",
          expected: "set together with certFile (or neither, for a self-signed certificate)",
          found: "nothing",
          source: "TESSERA_METRICS_CERT_FILE",
        },
      ],
    );
    assert.deepEqual(
      violations({ TESSERA_METRICS_CERT_FILE: "/c/tls.crt", TESSERA_METRICS_KEY_FILE: "/c/tls.key" }),
      [
        {
          path: "/metrics/secure",
          expected: "true when metrics.certFile is given (a certificate serves only HTTPS)",
          found: "false",
          source: "the default",
        },
      ],
    );
    assert.deepEqual(violations({ TESSERA_METRICS_SECURE: "yes" }), [
      { path: "/metrics/secure", expected: "a boolean", found: '"yes"', source: "TESSERA_METRICS_SECURE" },
    ]);
  });

  it("names one environment variable per setting", () => {
    const names = [...configEnvironmentVariables().keys()];
    assert.ok(names.includes("TESSERA_LEADER_ELECTION_LEASE_DURATION_MS"));
    assert.ok(names.includes("TESSERA_HEALTH_BIND_ADDRESS"));
    assert.ok(names.includes("TESSERA_CONTROLLERS"));
  });
});
