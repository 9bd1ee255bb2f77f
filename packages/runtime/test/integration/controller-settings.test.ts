// Per-controller and per-kind settings of the configuration, as a running
// manager applies them (the loading itself is unit-tested in config.test.ts).
import { strict as assert } from "node:assert";
import { CapturingLogger } from "@tessera/core/testing";
import { ConfigMaps } from "@tessera/client";
import { useControlPlane } from "@tessera/testenv";
import { ExponentialFailureRateLimiter } from "@tessera/workqueue";
import { Manager } from "../../src/index.js";
import { installWidgetCrd } from "./support/widget-cluster.js";
import { Widgets } from "./widget.js";

describe("controller settings of the configuration (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  const base = { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0" } as const;

  it("refuses controllers.<name>.maxBackoffMs beside the controller's own rateLimiter, naming both", async () => {
    const manager = await Manager.create({
      config: { ...base, controllers: { widget: { maxBackoffMs: 1000 } } },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new CapturingLogger(),
    });
    manager
      .controller()
      .for(Widgets)
      .named("widget")
      .withOptions({ rateLimiter: new ExponentialFailureRateLimiter<string>({ maxDelayMs: 5000 }) })
      .complete(() => undefined);
    await assert.rejects(
      manager.run(AbortSignal.timeout(60_000)),
      /controllers\.widget\.maxBackoffMs caps the default rate limiter, but controller "widget" declares a rateLimiter of its own/,
    );
  });

  it("logs a cache.byKind key that names no declared kind once, at warn, with the declared kinds", async () => {
    const logger = new CapturingLogger();
    const manager = await Manager.create({
      config: { ...base, cache: { byKind: { configmap: { labels: "a=b" }, configmaps: { labels: "a=b" } } } },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger,
    });
    manager
      .controller()
      .for(Widgets)
      .owns(ConfigMaps)
      .complete(() => undefined);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)));
      const warned = logger.lines.filter((l) => l.level === "warn" && /cache\.byKind/.test(l.message));
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.match(
        warned[0]!.message,
        /key "configmap" names no kind a controller caches.*the declared kinds are configmaps, widgets\.example\.com/,
      );
    } finally {
      stop.abort();
      await running;
    }
  });
});
