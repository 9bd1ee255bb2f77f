import { strict as assert } from "node:assert";
import { isNoopMeter, resolveInstrumentation, silentLogger, SystemClock, withFields } from "../src/index.js";
import { CapturingLogger, FakeClock, TestMetrics } from "../src/testing/index.js";

describe("withFields", () => {
  it("adds the component's fields to every line; a line's own fields win", () => {
    const logger = new CapturingLogger();
    const child = withFields(logger, { reflector: "pods", resource: "v1/pods" });
    child.info("synced", { objects: 3 });
    child.warn("conflict", { resource: "v1/pods/x" });
    assert.deepEqual(logger.lines, [
      { level: "info", message: "synced", fields: { reflector: "pods", resource: "v1/pods", objects: 3 } },
      { level: "warn", message: "conflict", fields: { reflector: "pods", resource: "v1/pods/x" } },
    ]);
    assert.equal(logger.matching(/sync/, "info").length, 1);
  });

  it("keeps the silent logger silent (no wrapper to call through)", () => {
    assert.equal(withFields(silentLogger, { a: 1 }), silentLogger);
  });
});

describe("resolveInstrumentation", () => {
  it("keeps what was given and defaults the rest", () => {
    const clock = new FakeClock();
    const logger = new CapturingLogger();
    const random = () => 0.5;
    const resolved = resolveInstrumentation({ clock, logger, random }, "@tessera/test");
    assert.equal(resolved.clock, clock);
    assert.equal(resolved.logger, logger);
    assert.equal(resolved.random, random);
    assert.equal(typeof resolved.meter.createCounter, "function");
    assert.equal(typeof resolved.tracer.startSpan, "function");
  });

  it("defaults to the system clock, Math.random and the silent logger", () => {
    const resolved = resolveInstrumentation({}, "@tessera/test");
    assert.ok(resolved.clock instanceof SystemClock);
    assert.equal(resolved.logger, silentLogger);
    const r = resolved.random();
    assert.ok(r >= 0 && r < 1);
    assert.ok(Object.isFrozen(resolved));
  });

  it("tells the global no-op meter from a real one", async () => {
    assert.equal(isNoopMeter(resolveInstrumentation({}, "@tessera/test").meter), true);
    const metrics = new TestMetrics();
    assert.equal(isNoopMeter(metrics.meter), false);
    await metrics.close();
  });
});
