import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { FakeClock } from "@tessera/core/testing";
import { IndexedStore, Reflector } from "@tessera/reflector";
import { ConfigMaps, describeResource } from "@tessera/client";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";

describe("a ConfigMap cache", () => {
  it("follows the collection, and a relist finds what the watch missed", async () => {
    const clock = new FakeClock();
    const lw = new InMemoryListerWatcher<V1ConfigMap>({ resource: describeResource(ConfigMaps) });
    lw.put({ metadata: { name: "a", namespace: "default" }, data: { v: "1" } });
    const store = new IndexedStore<V1ConfigMap>();
    const reflector = new Reflector({ listerWatcher: lw, store, clock, consistencyCheck: true });
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    assert.equal(await reflector.waitForSync(), true);

    lw.put({ metadata: { name: "a", namespace: "default" }, data: { v: "2" } });
    assert.deepEqual(store.getByKey("default/a")?.data, { v: "2" });

    lw.delete("default/a", { silent: true }); // a change the watch misses
    lw.expire(); // history compacted, the watch ends with 410 Expired
    await clock.advance(2_000); // the reflector's backoff, then a relist
    assert.equal(store.size, 0);

    stop.abort();
    await running;
  });
});
