import { strict as assert } from "node:assert";
import { CapturingLogger, TestMetrics } from "@tessera/core/testing";
import { useControlPlane } from "@tessera/testenv";
import { ApiStatusError, IndexedStore, Reflector } from "../../src/index.js";
import { type KubeObject } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  send,
  waitFor,
  waitForStoreEqualToList,
  kubeListerWatcher,
} from "../support/cluster.js";
import { RecordingListerWatcher } from "../support/recording-lister-watcher.js";

const NS = "fallback";

describe("fallback to LIST + WATCH on a kube-apiserver without watch-list (WatchList=false)", function () {
  this.timeout(120_000);
  const env = useControlPlane({ featureGates: { WatchList: false } });

  before(async function () {
    await createNamespace(env.cp, NS);
    await createConfigMaps(env.cp, NS, 1_200);
  });

  it("falls back to a paged LIST at RV 0 and a WATCH from its resourceVersion, counted and logged once", async () => {
    const kc = env.cp.kubeConfig;
    const lw = new RecordingListerWatcher(kubeListerWatcher<KubeObject>(kc, CONFIGMAPS, { namespace: NS }));
    const store = new IndexedStore<KubeObject>();
    const metrics = new TestMetrics();
    const logger = new CapturingLogger();
    const reflector = new Reflector({
      listerWatcher: lw,
      store,
      consistencyCheck: true,
      meter: metrics.meter,
      logger,
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);
    assert.equal(reflector.lastSyncMode, "list");

    const [watchList, firstList] = lw.calls;
    assert.equal(watchList?.verb, "watch");
    assert.equal((watchList?.options as { sendInitialEvents?: boolean }).sendInitialEvents, true);
    const rejection = watchList?.error as ApiStatusError;
    assert.ok(
      rejection instanceof ApiStatusError,
      `the watch-list request was refused: ${String(rejection)}`,
    );
    assert.equal(rejection.verb, "watch");
    assert.deepEqual(firstList?.options, { resourceVersion: "0", limit: 500 });
    const lastPage = lw.calls.filter((c) => c.verb === "list").at(-1);
    const watch = lw.calls.find((c, i) => i > 1 && c.verb === "watch");
    assert.ok(lastPage?.resourceVersion);
    assert.equal(
      watch?.options.resourceVersion,
      lastPage.resourceVersion,
      "the WATCH resumes where the LIST ended",
    );
    assert.equal((watch?.options as { sendInitialEvents?: boolean }).sendInitialEvents, undefined);

    // Changes reach the store through the plain WATCH.
    await send(env.cp, "PATCH", `/api/v1/namespaces/${NS}/configmaps/cm-7`, { data: { changed: "yes" } });
    await createConfigMaps(env.cp, NS, 3, 10, "late");
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);

    assert.equal(await metrics.sum("tessera_reflector_watchlist_fallbacks_total"), 1);
    assert.equal(
      await metrics.sum("tessera_reflector_watchlist_fallbacks_total", { reason: rejection.reason }),
      1,
    );
    const lines = logger.matching(/watch-list/, "info");
    assert.equal(lines.length, 1, "logged once");
    assert.equal(lines[0]?.fields.reason, rejection.reason);
    assert.equal(reflector.watchListEnabled, false, "a server that refuses watch-list is not asked again");
    stop.abort();
    await done;
    await metrics.close();
  });
});
