import { strict as assert } from "node:assert";
import { CapturingLogger } from "@tessera/core/testing";
import { useControlPlane } from "@tessera/testenv";
import {
  IndexedStore,
  isResourceExpired,
  Reflector,
  type ListerWatcher,
  type ListOptions,
} from "../../src/index.js";
import { type KubeObject, type ObjectList } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  waitFor,
  waitForStoreEqualToList,
  kubeListerWatcher,
} from "../support/cluster.js";
import { RecordingListerWatcher } from "../support/recording-lister-watcher.js";

const NS = "paged";

describe("a kube-apiserver without watch cache (--watch-cache=false): lists from etcd, page by page", function () {
  this.timeout(120_000);
  const env = useControlPlane({ apiserverFlags: ["--watch-cache=false"] });

  before(async function () {
    await createNamespace(env.cp, NS);
    await createConfigMaps(env.cp, NS, 1_234);
  });

  it("syncs through pages of 500 following continue tokens, then watches", async () => {
    const kc = env.cp.kubeConfig;
    const lw = new RecordingListerWatcher(kubeListerWatcher<KubeObject>(kc, CONFIGMAPS, { namespace: NS }));
    const store = new IndexedStore<KubeObject>();
    const reflector = new Reflector({ listerWatcher: lw, store, watchList: false, consistencyCheck: true });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);
    const pages = lw.calls.filter((c) => c.verb === "list" && c.outcome === "ok");
    assert.deepEqual(
      pages.map((p) => p.items),
      [500, 500, 234],
      `pages: ${JSON.stringify(lw.calls.map((c) => c.options))}`,
    );
    assert.deepEqual(pages[0]?.options, { resourceVersion: "0", limit: 500 });
    assert.equal(pages[1]?.options.resourceVersion, undefined, "continue pages carry no resourceVersion");
    assert.ok((pages[1]?.options as ListOptions).continue);
    await createConfigMaps(env.cp, NS, 3, 10, "late");
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);
    stop.abort();
    await done;
  });

  it("syncs by watch-list all the same (kube-apiserver 1.37 serves initial events from etcd)", async () => {
    const kc = env.cp.kubeConfig;
    const store = new IndexedStore<KubeObject>();
    const errors: unknown[] = [];
    const logger = new CapturingLogger();
    const reflector = new Reflector({
      listerWatcher: kubeListerWatcher<KubeObject>(kc, CONFIGMAPS, { namespace: NS }),
      store,
      consistencyCheck: true,
      logger,
      onError: (e) => errors.push(e),
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    assert.equal(reflector.lastSyncMode, "watch-list");
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);
    await waitFor("the consistency check", () => logger.matching(/consistency check passed/).length === 1);
    stop.abort();
    await done;
    assert.deepEqual(errors, []);
  });

  it("restarts a list whose continue token was compacted away, as one unpaginated list", async () => {
    const kc = env.cp.kubeConfig;
    const inner = kubeListerWatcher<KubeObject>(kc, CONFIGMAPS, { namespace: NS });
    let compacted = false;
    // After the first page, the collection moves on and etcd compacts: the page's continue token expires.
    const compacting: ListerWatcher<KubeObject> = {
      resource: inner.resource,
      namespace: inner.namespace,
      watch: (options, onEvent, signal) => inner.watch(options, onEvent, signal),
      list: async (options, signal): Promise<ObjectList<KubeObject>> => {
        const page = await inner.list(options, signal);
        if (!compacted && page.metadata?.continue) {
          compacted = true;
          await createConfigMaps(env.cp, NS, 1, 10, "moved-on");
          await env.cp.compact({ resetWatchCache: false });
        }
        return page;
      },
    };
    const lw = new RecordingListerWatcher(compacting);
    const store = new IndexedStore<KubeObject>();
    const reflector = new Reflector({ listerWatcher: lw, store, watchList: false, consistencyCheck: true });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    await waitForStoreEqualToList(store, kc, CONFIGMAPS, NS);
    const lists = lw.calls.filter((c) => c.verb === "list");
    assert.equal(lists.length, 3, JSON.stringify(lists.map((c) => [c.options, c.outcome])));
    assert.ok(isResourceExpired(lists[1]?.error), `the continue token expired: ${String(lists[1]?.error)}`);
    assert.deepEqual(lists[2]?.options, { resourceVersion: "0" }, "restarted whole, without limit");
    assert.equal(lists[2]?.outcome, "ok");
    stop.abort();
    await done;
  });
});
