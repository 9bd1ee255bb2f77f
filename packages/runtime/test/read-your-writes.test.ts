import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { ConfigMaps, type KubeObject } from "@tessera/client";
import type { ResourceEventHandler, SharedIndexInformer } from "@tessera/informers";
import { DeletedFinalStateUnknown } from "@tessera/reflector";
import { ReadYourWrites } from "../src/client/read-your-writes.js";

/** What the tracker uses of an informer: its lister's getByKey and one event handler. */
class StubInformer {
  readonly objects = new Map<string, KubeObject>();
  handler: ResourceEventHandler<KubeObject> | undefined;
  readonly lister = { getByKey: (key: string) => this.objects.get(key) };
  addEventHandler(handler: ResourceEventHandler<KubeObject>) {
    assert.equal(this.handler, undefined, "one handler per informer");
    this.handler = handler;
    return { close: () => undefined };
  }
  /** The watch delivers `rv` of default/cm. */
  deliver(rv: string) {
    const object = { metadata: { namespace: "default", name: "cm", resourceVersion: rv } };
    const old = this.objects.get("default/cm");
    this.objects.set("default/cm", object);
    if (old) void this.handler?.onUpdate?.(old, object);
    else void this.handler?.onAdd?.(object, false);
  }
}

const written = (rv: string): KubeObject => ({
  metadata: { namespace: "default", name: "cm", resourceVersion: rv },
});
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ReadYourWrites", () => {
  function setup(timeoutMs = 1000) {
    const clock = new FakeClock();
    const counted: string[] = [];
    const tracker = new ReadYourWrites({
      timeoutMs,
      clock,
      waits: {
        add: (_n, extra) => counted.push(String(extra?.["outcome"])),
        bind: () => ({ add: () => {} }),
      },
    });
    const stub = new StubInformer();
    const informers = [stub as unknown as SharedIndexInformer<KubeObject>];
    const read = (signal?: AbortSignal) =>
      tracker.settled(ConfigMaps, informers, ["default/cm"], undefined, signal);
    return { clock, counted, tracker, stub, informers, read };
  }

  it("holds a read until the written version is delivered, then counts it as seen", async () => {
    const { counted, tracker, stub, informers, read } = setup();
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    let done = false;
    const reading = read().then(() => (done = true));
    await settle();
    assert.equal(done, false, "the cache still holds 10");
    stub.deliver("11");
    await reading;
    assert.deepEqual(counted, ["seen"]);
    // Delivered: a later read does not wait, nor is it counted.
    await read();
    assert.deepEqual(counted, ["seen"]);
  });

  it("does not wait when the cache already holds the written version, or for a key never written", async () => {
    const { counted, tracker, stub, informers, read } = setup();
    stub.deliver("11");
    tracker.wrote(ConfigMaps, written("11"), informers);
    await read();
    await tracker.settled(ConfigMaps, informers, ["default/other"], undefined, undefined);
    assert.deepEqual(counted, []);
  });

  it("is satisfied by a delivered version that is not the cache's current one (a later write landed first)", async () => {
    const { counted, tracker, stub, informers, read } = setup();
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    const reading = read();
    // The watch delivers 11 then 12 before the read looks again: equality on 11 ends the wait.
    stub.deliver("11");
    stub.deliver("12");
    await reading;
    assert.deepEqual(counted, ["seen"]);
  });

  it("ends the wait on the object's deletion", async () => {
    const { counted, tracker, stub, informers, read } = setup();
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    const reading = read();
    const last = stub.objects.get("default/cm")!;
    stub.objects.delete("default/cm");
    void stub.handler?.onDelete?.(new DeletedFinalStateUnknown("default/cm", last));
    await reading;
    assert.deepEqual(counted, ["seen"]);
  });

  it("gives up at the deadline counted from the write, once, as a timeout", async () => {
    const { clock, counted, tracker, stub, informers, read } = setup(1000);
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    await clock.advance(400);
    let done = false;
    const reading = read().then(() => (done = true));
    await clock.advance(500);
    assert.equal(done, false, "600 ms after the read began would be past a deadline counted from the read");
    await clock.advance(100);
    await reading;
    assert.deepEqual(counted, ["timeout"]);
    await read();
    assert.deepEqual(counted, ["timeout"], "the expectation went with its deadline");
  });

  it("a list waits for the pending writes of its namespace only", async () => {
    const { counted, tracker, stub, informers } = setup();
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    await tracker.settled(ConfigMaps, informers, undefined, "elsewhere", undefined);
    assert.deepEqual(counted, []);
    const listing = tracker.settled(ConfigMaps, informers, undefined, "default", undefined);
    stub.deliver("11");
    await listing;
    assert.deepEqual(counted, ["seen"]);
  });

  it("an aborted read stops waiting and throws the signal's reason", async () => {
    const { tracker, stub, informers, read } = setup();
    stub.deliver("10");
    tracker.wrote(ConfigMaps, written("11"), informers);
    const stop = new AbortController();
    const reading = read(stop.signal);
    stop.abort(new Error("stopping"));
    await assert.rejects(reading, /stopping/);
  });
});
