import { strict as assert } from "node:assert";
import { FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { IndexedStore, KubeListerWatcher, Reflector, type Compression } from "../../src/index.js";
import { type KubeObject } from "@tessera/client";
import {
  CONFIGMAPS,
  createConfigMaps,
  createNamespace,
  describeDifference,
  listVersions,
  send,
  storeVersions,
  waitFor,
} from "../support/cluster.js";

const NS = "gzip";
const COUNT = 2_000;

// `compression: "gzip"` against the real kube-apiserver, which compresses
// LIST responses and watch-list streams when gzip is offered: the same
// objects arrive, in fewer bytes, and a watch keeps delivering live events
// through the compressed stream after the snapshot.
describe("gzip against a real kube-apiserver", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  let proxy: FaultProxy;

  before(async () => {
    await createNamespace(env.cp, NS);
    await createConfigMaps(env.cp, NS, COUNT, 400);
    proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
  });
  after(async () => proxy.stop());

  /** Syncs a reflector through the proxy; resolves with its store, bytes received and a stop. */
  async function sync(compression: Compression, watchList: boolean) {
    proxy.resetStats();
    const store = new IndexedStore<KubeObject>();
    const reflector = new Reflector({
      listerWatcher: new KubeListerWatcher(kubeConfigVia(env.cp.kubeConfig, proxy.url), CONFIGMAPS, {
        namespace: NS,
        compression,
      }),
      store,
      watchList,
      consistencyCheck: false,
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    await waitFor("the reflector to sync", () => reflector.hasSynced());
    assert.equal(reflector.lastSyncMode, watchList ? "watch-list" : "list");
    return {
      store,
      bytes: proxy.stats.bytesDown,
      stop: async () => {
        stop.abort();
        await done;
      },
    };
  }

  for (const watchList of [true, false]) {
    const mode = watchList ? "watch-list" : "LIST + WATCH";
    it(`${mode}: the same objects as without gzip, in fewer bytes, and live events after the sync`, async () => {
      const plain = await sync("none", watchList);
      await plain.stop();
      const gzip = await sync("gzip", watchList);
      try {
        const want = await listVersions(env.cp.kubeConfig, CONFIGMAPS, NS);
        assert.equal(describeDifference(storeVersions(gzip.store), want), "");
        assert.ok(
          gzip.bytes < plain.bytes / 2,
          `gzip received ${gzip.bytes} bytes, without it ${plain.bytes}: the server compressed`,
        );
        // The watch goes on after the snapshot: a change must come through the compressed stream.
        const name = `live-${watchList ? "wl" : "lw"}`;
        await send(env.cp, "POST", `/api/v1/namespaces/${NS}/configmaps`, {
          metadata: { name },
          data: { a: "1" },
        });
        await waitFor("the live ADDED event", () => gzip.store.getByKey(`${NS}/${name}`) !== undefined);
      } finally {
        await gzip.stop();
      }
    });
  }

  it("recovers when the compressed stream is cut in the middle", async () => {
    proxy.resetStats();
    proxy.cutAfterBytes(5_000); // a fraction of the compressed snapshot
    const store = new IndexedStore<KubeObject>();
    const reflector = new Reflector({
      listerWatcher: new KubeListerWatcher(kubeConfigVia(env.cp.kubeConfig, proxy.url), CONFIGMAPS, {
        namespace: NS,
        compression: "gzip",
      }),
      store,
      consistencyCheck: false,
    });
    const stop = new AbortController();
    const done = reflector.run(stop.signal);
    try {
      // A second connection means the first was cut and the reflector tried again.
      await waitFor("a connection to be cut and retried", () => proxy.stats.connections >= 2);
      proxy.cutAfterBytes(undefined);
      await waitFor("the reflector to sync after the cut", () => reflector.hasSynced());
      const want = await listVersions(env.cp.kubeConfig, CONFIGMAPS, NS);
      assert.equal(describeDifference(storeVersions(store), want), "");
    } finally {
      stop.abort();
      await done;
    }
  });
});
