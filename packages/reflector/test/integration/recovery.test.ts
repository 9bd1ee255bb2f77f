import { strict as assert } from "node:assert";
import { TestMetrics } from "@tessera/core/testing";
import { FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { IndexedStore, isResourceExpired, Reflector, StreamDecodeError } from "../../src/index.js";
import { type KubeObject } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  pool,
  send,
  waitFor,
  waitForStoreEqualToList,
  kubeListerWatcher,
  TEST_WIRE,
} from "../support/cluster.js";
import { CorruptingProxy } from "../support/corrupting-proxy.js";
import { RecordingListerWatcher } from "../support/recording-lister-watcher.js";
import { RecordingStore } from "../support/recording-store.js";

describe("recovery against a real kube-apiserver", function () {
  this.timeout(180_000);
  const env = useControlPlane();

  it("after a disconnect and an etcd compaction: 410, relist, store equal to LIST", async () => {
    const ns = "compaction";
    await createNamespace(env.cp, ns);
    await createConfigMaps(env.cp, ns, 100);
    const proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
    const metrics = new TestMetrics();
    const errors: unknown[] = [];
    try {
      const kc = kubeConfigVia(env.cp.kubeConfig, proxy.url);
      const store = new IndexedStore<KubeObject>();
      const reflector = new Reflector({
        listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: ns }),
        store,
        consistencyCheck: true,
        meter: metrics.meter,
        onError: (e) => errors.push(e),
      });
      const stop = new AbortController();
      const done = reflector.run(stop.signal);
      await waitFor("the reflector to sync", () => reflector.hasSynced());
      const syncedAt = reflector.lastSyncResourceVersion;

      // Disconnect; meanwhile the collection changes and etcd forgets the history.
      proxy.refuse(true);
      proxy.cutAll();
      await pool(20, 10, async (i) => {
        await send(env.cp, "DELETE", `/api/v1/namespaces/${ns}/configmaps/cm-${i}`, undefined);
      });
      await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/cm-50`, {
        data: { after: "compaction" },
      });
      await createConfigMaps(env.cp, ns, 10, 10, "new");
      await env.cp.compact();
      proxy.refuse(false);

      await waitForStoreEqualToList(store, env.cp.kubeConfig, CONFIGMAPS, ns, 90_000);
      assert.ok(errors.some(isResourceExpired), "the resumed watch was answered 410");
      assert.ok((await metrics.sum("tessera_reflector_relists_total", { reason: "expired" })) >= 1);
      assert.notEqual(reflector.lastSyncResourceVersion, syncedAt);
      stop.abort();
      await done;
    } finally {
      await metrics.close();
      await proxy.stop();
    }
  });

  it("misses no update when kube-apiserver restarts during a burst of writes", async () => {
    const ns = "burst";
    await createNamespace(env.cp, ns);
    await createConfigMaps(env.cp, ns, 200);
    const kc = env.cp.kubeConfig;
    const store = new IndexedStore<KubeObject>();
    const reflector = new Reflector({
      listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: ns }),
      store,
      consistencyCheck: true,
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());

    // Writers keep updating (and retry through the restart) while the apiserver goes down and up.
    let writing = true;
    let writes = 0;
    const writer = async (w: number): Promise<void> => {
      for (let round = 0; writing; round++) {
        const name = `cm-${(w * 37 + round) % 200}`;
        try {
          await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/${name}`, {
            data: { w: `${w}-${round}` },
          });
          writes++;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const writers = Array.from({ length: 4 }, (_, w) => writer(w));
    await waitFor("some writes before the restart", () => writes >= 100);
    await env.cp.restartApiserver();
    const afterRestart = writes;
    await waitFor("writes after the restart", () => writes >= afterRestart + 100);
    writing = false;
    await Promise.all(writers);

    await waitForStoreEqualToList(store, kc, CONFIGMAPS, ns, 90_000);
    stop.abort();
    await done;
  });

  it("ends a watch on a malformed line (or protobuf frame) with an error, resumes before it without a relist, and loses nothing", async () => {
    const ns = "malformed";
    await createNamespace(env.cp, ns);
    await createConfigMaps(env.cp, ns, 30);
    const proxy = new CorruptingProxy(env.cp);
    await proxy.start();
    const metrics = new TestMetrics();
    const errors: unknown[] = [];
    try {
      const lw = new RecordingListerWatcher(
        kubeListerWatcher<KubeObject>(proxy.kubeConfig, CONFIGMAPS, { namespace: ns }),
      );
      const store = new RecordingStore<KubeObject>();
      const reflector = new Reflector({
        listerWatcher: lw,
        store,
        consistencyCheck: true,
        meter: metrics.meter,
        onError: (e) => errors.push(e),
      });
      const stop = new AbortController();
      const done = reflector.run(stop.signal);
      await waitFor("the reflector to sync", () => reflector.hasSynced());
      const data = (name: string): Record<string, string> | undefined =>
        (store.inner.getByKey(`${ns}/${name}`) as { data?: Record<string, string> } | undefined)?.data;

      // A change before the bad line is stored; then the MODIFIED line of cm-2 arrives corrupted.
      await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/cm-1`, { data: { v: "before" } });
      await waitFor("cm-1's change", () => data("cm-1")?.v === "before");
      const watchesBefore = lw.calls.filter((c) => c.verb === "watch").length;
      // JSON: the line no longer parses. Protobuf: the field's tag and length before the text are broken.
      if (TEST_WIRE === "protobuf") proxy.corruptNext("CORRUPT-ME", { alsoBefore: 2 });
      else proxy.corruptNext('"CORRUPT-ME');
      await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/cm-2`, {
        data: { poison: "CORRUPT-ME-once" },
      });
      await waitFor("the decode error", () => errors.some((e) => e instanceof StreamDecodeError));
      assert.equal(proxy.corruptions, 1);
      const err = errors.find((e) => e instanceof StreamDecodeError) as StreamDecodeError;
      assert.equal(err.reason, "MalformedStream");
      assert.equal(err.verb, "watch");
      assert.equal(err.resource, "configmaps");
      if (TEST_WIRE === "protobuf")
        assert.match(err.excerpt, /^[0-9a-f]+$/, "the excerpt is the bad frame, in hex");
      else assert.match(err.excerpt, /^\{"type":"MODIFIED"/, "the excerpt is the start of the bad line");
      assert.equal(store.inner.size, 30, "nothing stored was dropped");
      assert.equal(data("cm-1")?.v, "before");

      // The resumed watch starts before the bad line, so the change it carried still arrives.
      await waitFor(
        "cm-2's change through the resumed watch",
        () => data("cm-2")?.poison === "CORRUPT-ME-once",
      );
      const watches = lw.calls.filter((c) => c.verb === "watch");
      assert.ok(watches.length > watchesBefore, "a new watch was opened");
      const failed = watches.find((c) => c.error instanceof StreamDecodeError);
      assert.ok(failed, "the watch that carried the bad line ended with the decode error");
      const resumed = watches[watches.indexOf(failed) + 1];
      assert.equal((resumed?.options as { sendInitialEvents?: boolean }).sendInitialEvents, undefined);
      assert.ok(resumed?.options.resourceVersion, "resumed from a resourceVersion, not from now");
      assert.deepEqual(
        store.writes.filter((w) => w.op === "replace").length,
        1,
        "no relist: the store kept everything it had",
      );
      await waitForStoreEqualToList(store.inner, env.cp.kubeConfig, CONFIGMAPS, ns);
      stop.abort();
      await done;
    } finally {
      await metrics.close();
      await proxy.stop();
    }
  });
});
