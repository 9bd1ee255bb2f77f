import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { ConfigMaps } from "@tessera/client";
import { useControlPlane } from "@tessera/testenv";
import { ShardedWorkload } from "../../src/index.js";
import { SlotSpace } from "../../src/ranges.js";

// ShardedWorkload, used without the runtime: two members of one ring on a
// real apiserver. The handover rule: a slot with work tracked on it does not
// move until that work ends; and each object is admitted by exactly one member.

const NS = "sharded-workload";
const RING = "workload-test";
const OBJECTS = 40;
const SLOTS = 16;
const durations = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 500 };

async function eventually(what: string, done: () => boolean, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("ShardedWorkload (member, coordinator, sharded informer), on a real apiserver", function () {
  this.timeout(180_000);
  const env = useControlPlane();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const start = (identity: string): ShardedWorkload<V1ConfigMap> => {
    const workload = new ShardedWorkload<V1ConfigMap>({
      kubeConfig: env.cp.kubeConfig,
      namespace: NS,
      ring: RING,
      identity,
      resource: ConfigMaps,
      slots: SLOTS,
      durations,
    });
    const stop = new AbortController();
    const running = workload.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running;
    });
    return workload;
  };

  it("holds a slot with tracked work until the work ends, then hands it over; each key is admitted by one member", async () => {
    const post = async (path: string, body: object): Promise<V1ConfigMap> => {
      const res = await env.cp.raw(path, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 201, res.body.slice(0, 300));
      return JSON.parse(res.body) as V1ConfigMap;
    };
    await post("/api/v1/namespaces", { metadata: { name: NS } });
    const objects: V1ConfigMap[] = [];
    for (let i = 0; i < OBJECTS; i++) {
      objects.push(await post(`/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: `cm-${i}` } }));
    }
    const keys = objects.map((o) => `${NS}/${o.metadata!.name!}`);
    const space = new SlotSpace(SLOTS);
    const slotOf = (o: V1ConfigMap) => space.slotOfKey(o.metadata!.uid!);

    const a = start("member-a");
    await eventually("member-a holds every slot and caches every object", () => {
      return a.member.activeSlots.size === SLOTS && keys.every((k) => a.admit(k));
    });

    // Work in flight on every object: no slot holding one may move while it runs.
    const finish = keys.map((k) => a.track(k));
    const busySlots = new Set(objects.map(slotOf));
    const b = start("member-b");
    await eventually("member-a is asked to give slots up", () => a.member.activeSlots.size < SLOTS);
    const released = [...busySlots].filter((s) => !a.member.activeSlots.has(s));
    assert.ok(released.length > 0, "some slot holding an object is being handed to member-b");
    for (const key of keys.filter((_, i) => released.includes(slotOf(objects[i]!)))) {
      assert.equal(
        a.admit(key),
        false,
        `${key}: its slot is being released, so member-a drops it at dequeue`,
      );
    }
    // Long enough for several renewals and coordinator rounds: the slots must still wait.
    await new Promise((resolve) => setTimeout(resolve, 3 * durations.retryPeriodMs + 1_000));
    for (const slot of released) {
      assert.equal(
        b.member.activeSlots.has(slot),
        false,
        `slot ${slot} moved while work on it was in flight`,
      );
    }

    for (const done of finish) done();
    await eventually("member-b takes over the released slots", () =>
      released.every((s) => b.member.activeSlots.has(s)),
    );
    await eventually("every key is admitted by exactly one member", () =>
      keys.every((k) => Number(a.admit(k)) + Number(b.admit(k)) === 1),
    );
    for (const slot of b.member.activeSlots) {
      assert.equal(a.member.activeSlots.has(slot), false, `slot ${slot} held by both members`);
    }
  });
});
