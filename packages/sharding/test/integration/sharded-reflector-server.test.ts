import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import {
  IndexedStore,
  KubeListerWatcher,
  metaNamespaceKey,
  type DeletedFinalStateUnknown,
  type ListerWatcher,
  type ListOptions,
  type ReflectorStore,
  type WatchEventHandler,
  type WatchOptions,
} from "@tessera/reflector";
import { ConfigMaps, type ObjectList } from "@tessera/client";
import { FaultProxy, kubeConfigVia, useControlPlane, type ControlPlane } from "@tessera/testenv";
import { ShardedReflector } from "../../src/index.js";
import { HASH_SPACE, ShardSelector, SlotSpace, type HashRange } from "../../src/ranges.js";

const configMaps = ConfigMaps;
const UID = "object.metadata.uid" as const;

/** A request a {@link RecordingListerWatcher} passed on. */
interface Sent {
  readonly verb: "list" | "watch";
  readonly options: ListOptions & WatchOptions;
}

/** Passes every call to `inner` and records what was asked. */
class RecordingListerWatcher<T extends V1ConfigMap> implements ListerWatcher<T> {
  readonly resource: string;
  readonly namespace?: string;
  readonly sent: Sent[] = [];

  constructor(private readonly inner: ListerWatcher<T>) {
    this.resource = inner.resource;
    if (inner.namespace !== undefined) this.namespace = inner.namespace;
  }

  list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    this.sent.push({ verb: "list", options: { ...options } });
    return this.inner.list(options, signal);
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    this.sent.push({ verb: "watch", options: { ...options } });
    return this.inner.watch(options, onEvent, signal);
  }
}

/** An IndexedStore that counts `replace` calls (the sharded reflector must make none). */
class CountingStore implements ReflectorStore<V1ConfigMap> {
  readonly contents = new IndexedStore<V1ConfigMap>();
  replaces = 0;
  add(obj: V1ConfigMap): void {
    this.contents.add(obj);
  }
  update(obj: V1ConfigMap): void {
    this.contents.update(obj);
  }
  delete(obj: V1ConfigMap | DeletedFinalStateUnknown<V1ConfigMap>): void {
    this.contents.delete(obj);
  }
  replace(items: readonly V1ConfigMap[], rv: string): void {
    this.replaces++;
    this.contents.replace(items, rv);
  }
}

/** Whether a request synced a range from scratch (watch-list or a relist), not a probe, resume or consistency check. */
function isSync(r: Sent): boolean {
  if (r.verb === "watch") return r.options.sendInitialEvents === true;
  return r.options.limit !== 1 && r.options.resourceVersionMatch !== "Exact";
}

async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function eventually(what: string, done: () => boolean | Promise<boolean>, limitMs = 60_000) {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function send(
  cp: ControlPlane,
  method: string,
  path: string,
  body?: object,
  type = "application/json",
) {
  const res = await cp.raw(path, {
    method,
    ...(body ? { body: JSON.stringify(body), headers: { "content-type": type } } : {}),
  });
  assert.ok(
    res.status >= 200 && res.status < 300,
    `${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`,
  );
  return res;
}

/** key -> uid@resourceVersion, sorted. */
function view(objects: Iterable<V1ConfigMap>): string[] {
  return Array.from(
    objects,
    (o) => `${metaNamespaceKey(o)} ${o.metadata?.uid}@${o.metadata?.resourceVersion}`,
  ).sort();
}

/** The namespace's ConfigMaps from a plain (unsharded) LIST, filtered client-side by `selector`. */
async function filteredList(
  cp: ControlPlane,
  ns: string,
  selector: ShardSelector | undefined,
): Promise<string[]> {
  const res = await send(cp, "GET", `/api/v1/namespaces/${ns}/configmaps`);
  const items = (JSON.parse(res.body) as { items: V1ConfigMap[] }).items;
  return view(selector ? items.filter((cm) => selector.matchesObject(cm)) : items);
}

for (const gate of [true, false]) {
  describe(`ShardedReflector against a real apiserver, ShardedListAndWatch ${gate ? "on" : "off"}`, function () {
    this.timeout(180_000);
    const env = useControlPlane({ featureGates: { ShardedListAndWatch: gate } });

    // Over both wires: the shard selector, the server's filtering and the client-side hash must agree
    // whichever encoding the objects arrive in.
    for (const wire of ["json", "protobuf"] as const)
      it(`follows a gain, a shrink and a loss over ${wire}: the store equals the client-side-filtered LIST each time, kept ranges are never relisted`, async () => {
        const ns = `sharded-member-${wire}`;
        await send(env.cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
        const path = `/api/v1/namespaces/${ns}/configmaps`;
        await pool(300, 16, (i) =>
          send(env.cp, "POST", path, { metadata: { name: `cm-${i}` }, data: { i: String(i) } }).then(
            () => undefined,
          ),
        );
        let seq = 0;
        /** Creates, changes and deletes some objects, all over the space. */
        const churn = async () => {
          const round = ++seq;
          await pool(30, 8, async (i) => {
            const n = (round * 37 + i * 11) % 300;
            if (i % 3 === 0) await send(env.cp, "POST", path, { metadata: { name: `new-${round}-${i}` } });
            else if (i % 3 === 1)
              await send(
                env.cp,
                "PATCH",
                `${path}/cm-${n}`,
                { data: { round: String(round) } },
                "application/merge-patch+json",
              );
            else await env.cp.raw(`${path}/cm-${n}`, { method: "DELETE" }); // may be gone already
          });
        };

        const space = new SlotSpace(16);
        const slots = (...runs: [number, number][]) =>
          runs.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i));
        const lw = new RecordingListerWatcher<V1ConfigMap>(
          new KubeListerWatcher(env.cp.kubeConfig, configMaps, { namespace: ns, wire }),
        );
        const store = new CountingStore();
        const sharded = new ShardedReflector<V1ConfigMap>({
          listerWatcher: lw,
          store,
          ring: "it",
          member: "m-0",
          reflector: { consistencyCheck: true },
        });
        const stop = new AbortController();
        let current: number[] = [];
        const expectFiltered = async (what: string) => {
          const selector = current.length > 0 ? space.selectorFor(UID, current) : undefined;
          let want: string[] = [];
          await eventually(
            `${what}: the store equals the filtered LIST`,
            async () => {
              want = await filteredList(env.cp, ns, selector);
              return JSON.stringify(view(store.contents.list())) === JSON.stringify(want);
            },
            30_000,
          );
          assert.ok(want.length > 0 || current.length === 0);
        };
        const assign = async (next: number[]) => {
          current = next;
          await sharded.setSlots(next, space);
        };

        await assign(slots([0, 8]));
        const done = sharded.run(stop.signal);
        try {
          assert.equal(await sharded.waitForSync(), true);
          await expectFiltered("first half");
          await churn();
          await expectFiltered("first half, after writes");
          await eventually("the probe answered", () => sharded.serverFiltering !== undefined);
          assert.equal(sharded.serverFiltering, gate, "the probe tells whether the server filters");

          // gain slots 12..13: one sync, of that range only
          let mark = lw.sent.length;
          await assign(slots([0, 8], [12, 14]));
          assert.equal(await sharded.waitForSync(), true);
          await churn();
          await expectFiltered("after the gain");
          const gained = space.selectorFor(UID, slots([12, 14])).toString();
          let since = lw.sent.slice(mark);
          assert.ok(
            since.every((r) => r.options.shardSelector === gained),
            `after the gain: ${since.map((r) => r.options.shardSelector).join(" ; ")}`,
          );
          assert.equal(
            since.filter(isSync).length,
            1,
            "the gained range synced once; the kept one not at all",
          );

          // shrink: the tail 4..7 of the first run goes away; 0..3 resumes from its resourceVersion
          const rvBefore = sharded.rangeStates().find((s) => s.range.start === 0n)!.resourceVersion;
          mark = lw.sent.length;
          await assign(slots([0, 4], [12, 14]));
          await churn();
          await expectFiltered("after the shrink");
          since = lw.sent.slice(mark);
          assert.deepEqual(
            since.map((r) => [r.verb, r.options.shardSelector, r.options.sendInitialEvents ?? false]),
            [["watch", space.selectorFor(UID, slots([0, 4])).toString(), false]],
            "the kept piece resumed with one plain WATCH, no LIST",
          );
          assert.equal(since[0]!.options.resourceVersion, rvBefore);
          const modes = sharded.rangeStates().map((s) => s.mode);
          assert.equal(modes[0], "resumed");
          assert.ok(modes[1] === "watch-list" || modes[1] === "list", `the gained range: ${modes[1]}`);

          // lose slots 12..13 entirely: stopped and evicted, nothing asked
          mark = lw.sent.length;
          await assign(slots([0, 4]));
          await expectFiltered("after the loss");
          await churn();
          await expectFiltered("after the loss, after writes");
          assert.deepEqual(lw.sent.slice(mark), [], "a loss sends nothing");
          assert.equal(sharded.rangeCount, 1);
          assert.equal(sharded.objectCount, store.contents.size);
          assert.equal(store.replaces, 0, "the shared store is never replaced");
        } finally {
          stop.abort();
          await done;
        }
      });

    it(`sends each of 4 members ${gate ? "about a quarter" : "all"} of the watch bytes, and every store stays exact`, async () => {
      const ns = "sharded-bytes";
      await send(env.cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
      // Without the gate the probe tells by what a LIST returns; an empty
      // namespace cannot show it, so one object is there from the start.
      await send(env.cp, "POST", `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "seed" } });
      const quarter = HASH_SPACE / 4n;
      const ranges: (HashRange | undefined)[] = [0, 1, 2, 3].map((i) => ({
        start: BigInt(i) * quarter,
        end: BigInt(i + 1) * quarter,
      }));
      ranges.push(undefined); // a fifth, unsharded watcher: what the whole stream weighs
      const members = await Promise.all(
        ranges.map(async (range, i) => {
          const proxy = new FaultProxy(env.cp.apiserverPort);
          await proxy.start();
          const lw = new KubeListerWatcher<V1ConfigMap>(
            kubeConfigVia(env.cp.kubeConfig, proxy.url),
            configMaps,
            { namespace: ns },
          );
          const store = new CountingStore();
          const sharded = new ShardedReflector<V1ConfigMap>({
            listerWatcher: lw,
            store,
            ring: "bytes",
            member: `m-${i}`,
            reflector: { consistencyCheck: true },
          });
          await sharded.setRanges([range ?? { start: 0n, end: HASH_SPACE }]);
          return {
            range,
            proxy,
            store,
            sharded,
            selector: range ? ShardSelector.of(UID, [range]) : undefined,
          };
        }),
      );
      const stop = new AbortController();
      const runs = members.map((m) => m.sharded.run(stop.signal));
      try {
        for (const m of members) await m.sharded.waitForSync();
        await eventually("probes answered", () =>
          members.every((m) => m.sharded.serverFiltering !== undefined),
        );
        // The watch of each is open once its probe and sync are done; count only what the writes cost from here.
        await new Promise((resolve) => setTimeout(resolve, 500));
        for (const m of members) m.proxy.resetStats();

        const OBJECTS = 2_000;
        const data = { payload: "x".repeat(1_000) };
        await pool(OBJECTS, 32, (i) =>
          send(env.cp, "POST", `/api/v1/namespaces/${ns}/configmaps`, {
            metadata: { name: `cm-${i}` },
            data,
          }).then(() => undefined),
        );
        for (const m of members) {
          await eventually(
            `${m.sharded.name} of ${m.selector?.toString() ?? "everything"} caught up`,
            async () => {
              return (
                JSON.stringify(view(m.store.contents.list())) ===
                JSON.stringify(await filteredList(env.cp, ns, m.selector))
              );
            },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        const bytes = members.map((m) => m.proxy.stats.bytesDown);
        const sharded = bytes.slice(0, 4);
        const whole = bytes[4]!;
        const total = sharded.reduce((a, b) => a + b, 0);
        const counts = members.map((m) => m.store.contents.size);
        console.log(
          `      watch bytes with the gate ${gate ? "on" : "off"}: members ${sharded.join(", ")} ` +
            `(objects ${counts.slice(0, 4).join(", ")}), sum ${total}, unsharded watcher ${whole}`,
        );
        assert.equal(
          counts.slice(0, 4).reduce((a, b) => a + b, 0),
          OBJECTS + 1, // and the seed
          "the four stores partition the collection",
        );
        assert.equal(counts[4], OBJECTS + 1);
        for (const [i, b] of sharded.entries()) {
          if (gate) {
            assert.ok(
              Math.abs(b - total / 4) <= 0.15 * (total / 4),
              `member ${i}: ${b} bytes, a quarter of ${total} is ${total / 4}`,
            );
          } else {
            assert.ok(
              Math.abs(b - whole) <= 0.15 * whole,
              `member ${i}: ${b} bytes, the whole stream is ${whole}`,
            );
          }
        }
        if (gate)
          assert.ok(
            Math.abs(total - whole) <= 0.15 * whole,
            `together the members got ${total}, the whole stream is ${whole}`,
          );
        for (const m of members) {
          assert.equal(m.sharded.serverFiltering, gate);
          assert.equal(m.store.replaces, 0);
        }
      } finally {
        stop.abort();
        await Promise.all(runs);
        for (const m of members) await m.proxy.stop();
      }
    });
  });
}
