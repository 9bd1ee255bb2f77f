import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { ConnectionError, MIN_WATCH_TIMEOUT_SECONDS, Reflector } from "../src/index.js";
import { ScriptedListerWatcher } from "../src/testing/index.js";
import { added, bookmark, cm, list, type TestObject } from "./support/objects.js";
import { RecordingStore } from "./support/recording-store.js";

describe("Reflector.health", () => {
  const margin = 30_000;
  const limitMs = 2 * MIN_WATCH_TIMEOUT_SECONDS * 1000 + margin;

  function start() {
    const clock = new FakeClock();
    const lw = new ScriptedListerWatcher<TestObject>();
    const reflector = new Reflector<TestObject>({
      listerWatcher: lw,
      store: new RecordingStore<TestObject>(),
      clock,
      random: () => 0.5,
      watchList: false,
      inactivityMarginMs: margin,
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    return { clock, lw, reflector, stop, done };
  }

  it("stays healthy while events arrive, however long it runs", async () => {
    const h = start();
    (await h.lw.nextList()).respond(list("10", [cm("a", "5")]));
    const watch = await h.lw.nextWatch();
    for (let i = 0; i < 10; i++) {
      await h.clock.advance(limitMs / 2);
      watch.emit(added(cm(`b${i}`, String(11 + i))));
      assert.deepEqual(h.reflector.health(), { healthy: true });
    }
    h.stop.abort();
    await h.done;
  });

  it("turns unhealthy when nothing has been heard past the longest watch deadline, naming the last error, and recovers once heard again", async () => {
    const h = start();
    (await h.lw.nextList()).respond(list("10", []));
    // From now on the server is unreachable: every call fails, the reflector backs off and retries.
    let sawUnhealthy = false;
    for (let i = 0; i < 1000 && !sawUnhealthy; i++) {
      const call = await h.lw.next();
      call.fail(new ConnectionError({ resource: "configmaps", verb: call.verb }, "connect ECONNREFUSED"));
      await h.clock.advanceToNext();
      const health = h.reflector.health();
      assert.equal(health.healthy, h.clock.now() <= limitMs, `at ${h.clock.now()} ms`);
      if (!health.healthy) {
        sawUnhealthy = true;
        assert.match(
          health.reason ?? "",
          /nothing heard from the server for \d+ s \(limit 630 s\); last error: .*ECONNREFUSED/,
        );
      }
    }
    assert.ok(sawUnhealthy);
    // The server is back: the retried watch delivers a bookmark, and the reflector is healthy again.
    const watch = await h.lw.nextWatch();
    watch.emit(bookmark("99"));
    assert.deepEqual(h.reflector.health(), { healthy: true });
    h.stop.abort();
    await h.done;
  });
});
