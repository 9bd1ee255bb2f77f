import { strict as assert } from "node:assert";
import type { Logger } from "@tessera/core";
import { CapturingLogger, TestMetrics } from "@tessera/core/testing";
import { FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { IndexedStore, Reflector } from "../../src/index.js";
import { type KubeObject } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  describeDifference,
  listVersions,
  requestCounts,
  send,
  storeVersions,
  waitFor,
  waitForStoreEqualToList,
  kubeListerWatcher,
} from "../support/cluster.js";
import { RecordingStore } from "../support/recording-store.js";

const BULK = "bulk";
const COUNT = 5_000;

describe("watch-list against a real kube-apiserver", function () {
  this.timeout(180_000);
  const env = useControlPlane();

  before(async function () {
    this.timeout(180_000);
    await createNamespace(env.cp, BULK);
    await createConfigMaps(env.cp, BULK, COUNT, 200);
  });

  it(`cold-syncs ${COUNT} ConfigMaps with one WATCH request and no LIST; the store equals a fresh LIST`, async () => {
    const kc = env.cp.kubeConfig;
    const store = new IndexedStore<KubeObject>();
    // The consistency check would LIST at the synced resourceVersion: a second request, which this
    // test is about to count. The next tests run with the check on.
    const reflector = new Reflector({
      listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: BULK }),
      store,
      consistencyCheck: false,
    });
    const before = await requestCounts(env.cp, "configmaps");
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    assert.equal(store.size, COUNT);
    assert.equal(reflector.lastSyncMode, "watch-list");
    stop.abort();
    await done;
    // kube-apiserver counts a WATCH when it ends.
    let after = before;
    await waitFor("the apiserver to count the finished WATCH", async () => {
      after = await requestCounts(env.cp, "configmaps");
      return (after.WATCH ?? 0) > (before.WATCH ?? 0);
    });
    assert.equal((after.WATCH ?? 0) - (before.WATCH ?? 0), 1, "one WATCH");
    assert.equal((after.LIST ?? 0) - (before.LIST ?? 0), 0, "no LIST");
    const want = await listVersions(kc, CONFIGMAPS, BULK);
    assert.equal(describeDifference(storeVersions(store), want), "");
  });

  it("keeps consuming the same stream after the snapshot (consistency check on): live changes arrive", async () => {
    const ns = "live";
    await createNamespace(env.cp, ns);
    await createConfigMaps(env.cp, ns, 50);
    const kc = env.cp.kubeConfig;
    const store = new IndexedStore<KubeObject>();
    const metrics = new TestMetrics();
    const logger = new CapturingLogger();
    const errors: unknown[] = [];
    const reflector = new Reflector({
      listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: ns }),
      store,
      consistencyCheck: true,
      meter: metrics.meter,
      logger,
      onError: (e) => errors.push(e),
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    await waitFor("the consistency check", () => logger.matching(/consistency check passed/).length === 1);
    await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/cm-1`, { data: { changed: "yes" } });
    await send(env.cp, "DELETE", `/api/v1/namespaces/${ns}/configmaps/cm-2`, undefined);
    await createConfigMaps(env.cp, ns, 5, 10, "late");
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, ns);
    assert.equal((store.getByKey(`${ns}/cm-1`) as { data?: Record<string, string> }).data?.changed, "yes");
    assert.equal(
      await metrics.sum("tessera_reflector_watches_total"),
      1,
      "the snapshot's stream carried the changes",
    );
    assert.equal(await metrics.sum("tessera_reflector_watchlist_fallbacks_total"), 0);
    assert.equal(await metrics.sum("tessera_reflector_consistency_check_failures_total"), 0);
    assert.ok((await metrics.sum("tessera_reflector_bookmarks_total")) >= 1);
    assert.deepEqual(errors, []);
    stop.abort();
    await done;
    await metrics.close();
  });

  it("never exposes a partial snapshot when the stream is cut during the initial events, and recovers", async () => {
    const proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
    try {
      const kc = kubeConfigVia(env.cp.kubeConfig, proxy.url);
      const store = new RecordingStore<KubeObject>();
      const metrics = new TestMetrics();
      const logger = new CapturingLogger();
      // The first connection is cut after 300 KB, a fraction of the ~1.7 MB snapshot; the cut is
      // switched off as soon as the reflector falls back, so the LIST goes through.
      proxy.cutAfterBytes(300_000);
      const onFallback: Logger = {
        debug: (message, fields) => logger.debug(message, fields),
        info: (message, fields) => {
          if (/watch-list/.test(message)) proxy.cutAfterBytes(undefined);
          logger.info(message, fields);
        },
        warn: (message, fields) => logger.warn(message, fields),
        error: (message, fields) => logger.error(message, fields),
      };
      const reflector = new Reflector({
        listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: BULK }),
        store,
        consistencyCheck: true,
        meter: metrics.meter,
        logger: onFallback,
      });
      const stop = new AbortController();
      const done = reflector.run(stop.signal);
      await waitFor("the reflector to sync", () => reflector.hasSynced());
      await waitForStoreEqualToList(store.inner, env.cp.kubeConfig, CONFIGMAPS, BULK);
      assert.equal(store.writes[0]?.op, "replace", "nothing was delivered before a complete snapshot");
      for (const w of store.writes) {
        if (w.op === "replace") assert.equal(w.size, COUNT, "every replace is a complete snapshot");
      }
      assert.equal(
        await metrics.sum("tessera_reflector_watchlist_fallbacks_total", { reason: "ConnectionFailed" }),
        1,
      );
      assert.equal(logger.matching(/falling back to LIST \+ WATCH/, "info").length, 1);
      assert.equal(reflector.watchListEnabled, true, "a cut is not a lack of support");
      stop.abort();
      await done;
      await metrics.close();
    } finally {
      await proxy.stop();
    }
  });

  it("resumes from another reflector's store and resourceVersion with one plain WATCH: no LIST, no watch-list", async () => {
    const ns = "handover";
    await createNamespace(env.cp, ns);
    await createConfigMaps(env.cp, ns, 40);
    const kc = env.cp.kubeConfig;
    const store = new RecordingStore<KubeObject>();
    const first = new Reflector({
      listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: ns }),
      store,
      consistencyCheck: false,
    });
    const initial = await requestCounts(env.cp, "configmaps");
    const stopFirst = new AbortController();
    const firstDone = first.run(stopFirst.signal);
    await waitFor("the first reflector to sync", () => first.hasSynced());
    stopFirst.abort();
    await firstDone;
    const handedOverAt = first.lastSyncResourceVersion;
    // Changes while no reflector runs: the resumed watch must deliver them from handedOverAt.
    await send(env.cp, "PATCH", `/api/v1/namespaces/${ns}/configmaps/cm-3`, { data: { gap: "yes" } });
    await send(env.cp, "DELETE", `/api/v1/namespaces/${ns}/configmaps/cm-4`, undefined);
    await createConfigMaps(env.cp, ns, 2, 10, "gap");

    const dataOf = (name: string): Record<string, string> | undefined =>
      (store.inner.getByKey(`${ns}/${name}`) as { data?: Record<string, string> } | undefined)?.data;
    assert.equal(dataOf("cm-3")?.gap, undefined, "cm-3's change is not in the handed-over store");

    const metrics = new TestMetrics();
    let before = initial;
    await waitFor("the apiserver to count the first reflector's WATCH", async () => {
      before = await requestCounts(env.cp, "configmaps");
      return (before.WATCH ?? 0) > (initial.WATCH ?? 0);
    });
    const second = new Reflector({
      listerWatcher: kubeListerWatcher(kc, CONFIGMAPS, { namespace: ns }),
      store,
      consistencyCheck: true,
      resumeFrom: handedOverAt,
      meter: metrics.meter,
    });
    assert.equal(second.hasSynced(), true);
    const stop = new AbortController();
    const done = second.run(stop.signal);
    // Waited for without a LIST, which the request count below would include.
    const has = (name: string): boolean => store.inner.has(`${ns}/${name}`);
    await waitFor(
      "the changes made between the two reflectors",
      () => dataOf("cm-3")?.gap === "yes" && !has("cm-4") && has("gap-0") && has("gap-1"),
    );
    assert.equal(store.writes.filter((w) => w.op === "replace").length, 1, "only the first reflector's sync");
    assert.equal(await metrics.sum("tessera_reflector_watches_total", { mode: "watch" }), 1);
    assert.equal(await metrics.sum("tessera_reflector_watches_total", { mode: "watch-list" }), 0);
    stop.abort();
    await done;
    let after = before;
    await waitFor("the apiserver to count the finished WATCH", async () => {
      after = await requestCounts(env.cp, "configmaps");
      return (after.WATCH ?? 0) > (before.WATCH ?? 0);
    });
    assert.equal((after.WATCH ?? 0) - (before.WATCH ?? 0), 1, "one WATCH");
    assert.equal((after.LIST ?? 0) - (before.LIST ?? 0), 0, "no LIST");
    await waitForStoreEqualToList(store.inner, kc, CONFIGMAPS, ns);
    await metrics.close();
  });
});
