import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { ConfigMaps } from "@tessera/runtime";
import { FakeClient, reconcileOnce, serverErrors } from "@tessera/runtime/testing";
import {
  ConfigMapMirror,
  FINALIZER,
  MIRROR_LABEL,
  NAMESPACES_ANNOTATION,
  SOURCE_NAME_LABEL,
  SOURCE_NAMESPACE_LABEL,
  sourceOf,
} from "../src/controllers/configmap-mirror.js";

// The mirror's bookkeeping of the namespace list, one reconcile at a time on
// the fake client: which copies appear, which go, and what a failing cleanup
// leaves. The control-plane test (configmap-mirror.test.ts) runs it in a manager.
const source = { namespace: "default", name: "settings" };

function labelled(namespaces: string, data: Record<string, string> = { color: "blue" }): V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      ...source,
      labels: { [MIRROR_LABEL]: "true" },
      annotations: { [NAMESPACES_ANNOTATION]: namespaces },
    },
    data,
  };
}

/** The namespaces holding a copy of the source, sorted. */
async function copies(client: FakeClient): Promise<string[]> {
  const list = await client.list(ConfigMaps, {
    labels: { [SOURCE_NAMESPACE_LABEL]: "default", [SOURCE_NAME_LABEL]: "settings" },
  });
  return list.map((c) => c.metadata!.namespace!).sort();
}

/** Sets the source's annotation as a user would, then reconciles it. */
async function relist(client: FakeClient, namespaces: string) {
  const live = client.peek(ConfigMaps, source)!;
  await client.update(ConfigMaps, {
    ...live,
    metadata: { ...live.metadata, annotations: { [NAMESPACES_ANNOTATION]: namespaces } },
  });
  return reconcileOnce(ConfigMapMirror, source, { client });
}

describe("ConfigMapMirror, one reconcile on the fake client", function () {
  it("holds the source with its finalizer before it writes a copy", async () => {
    const { writes, error } = await reconcileOnce(ConfigMapMirror, source, { objects: [labelled("team-a")] });
    assert.equal(error, undefined);
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.object.metadata?.namespace}/${w.object.metadata?.name}`),
      ["update default/settings", "apply team-a/settings"],
    );
    assert.deepEqual(writes[0]!.object.metadata?.finalizers, [FINALIZER]);
  });

  it("follows the namespace list: trims it, skips its own namespace, adds and removes copies", async () => {
    const first = await reconcileOnce(ConfigMapMirror, source, {
      objects: [labelled(" team-a,team-b , default,,")],
    });
    const client = first.client;
    assert.deepEqual(await copies(client), ["team-a", "team-b"]);
    assert.deepEqual(client.peek(ConfigMaps, { namespace: "team-a", name: "settings" })?.data, {
      color: "blue",
    });
    assert.deepEqual(first.events, []);

    const moved = await relist(client, "team-b,team-c");
    assert.deepEqual(await copies(client), ["team-b", "team-c"]);
    assert.deepEqual(
      moved.writes.map((w) => `${w.verb} ${w.object.metadata?.namespace}`),
      // team-b's copy is unchanged: its apply stores nothing.
      ["apply team-c", "delete team-a"],
    );
    assert.deepEqual(
      moved.events.map((e) => [e.reason, e.note]),
      [["CopiesRemoved", "removed the copies in team-a"]],
    );

    const emptied = await relist(client, "");
    assert.deepEqual(await copies(client), []);
    assert.deepEqual(
      emptied.events.map((e) => e.note),
      ["removed the copies in team-b, team-c"],
    );
    // Still mirrored (the label is on): the finalizer stays for when the list grows again.
    assert.deepEqual(client.peek(ConfigMaps, source)?.metadata?.finalizers, [FINALIZER]);
  });

  it("puts back a copy deleted by hand: the copy's event maps to its source, whose reconcile writes it again", async () => {
    const { client } = await reconcileOnce(ConfigMapMirror, source, { objects: [labelled("team-a")] });
    const copy = client.peek(ConfigMaps, { namespace: "team-a", name: "settings" })!;
    await client.delete(ConfigMaps, { namespace: "team-a", name: "settings" });
    const [woken] = sourceOf(copy);
    assert.deepEqual(woken, source, "the watch of ConfigMaps wakes the source the copy names");
    assert.deepEqual(
      sourceOf(client.peek(ConfigMaps, source)!),
      [],
      "a ConfigMap that is no copy wakes nothing",
    );
    const back = await reconcileOnce(ConfigMapMirror, woken, { client });
    assert.equal(back.error, undefined);
    assert.deepEqual(await copies(client), ["team-a"]);
  });

  it("leaves alone a ConfigMap of the copy's name that is no copy, with a Warning", async () => {
    const theirs: V1ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { namespace: "team-a", name: "settings" },
      data: { owner: "team-a" },
    };
    const { writes, events, client } = await reconcileOnce(ConfigMapMirror, source, {
      objects: [labelled("team-a,team-b"), theirs],
    });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.object.metadata?.namespace}/${w.object.metadata?.name}`),
      ["update default/settings", "apply team-b/settings"],
    );
    assert.deepEqual(client.peek(ConfigMaps, { namespace: "team-a", name: "settings" })?.data, {
      owner: "team-a",
    });
    assert.deepEqual(
      events.map((e) => [e.type, e.reason, e.note]),
      [["Warning", "CopyBlocked", "team-a/settings exists and is no copy of this ConfigMap: left alone"]],
    );
  });

  it("takes the copies back and lets go of the source when its label goes", async () => {
    const { client } = await reconcileOnce(ConfigMapMirror, source, { objects: [labelled("team-a,team-b")] });
    const live = client.peek(ConfigMaps, source)!;
    await client.update(ConfigMaps, { ...live, metadata: { ...live.metadata, labels: {} } });
    const unlabelled = await reconcileOnce(ConfigMapMirror, source, { client });
    assert.equal(unlabelled.error, undefined);
    assert.deepEqual(await copies(client), []);
    assert.deepEqual(client.peek(ConfigMaps, source)?.metadata?.finalizers, undefined);
  });

  it("keeps the finalizer while a copy cannot be deleted, and finishes on the retry", async () => {
    const client = new FakeClient({ objects: [labelled("team-a,team-b")] });
    await reconcileOnce(ConfigMapMirror, source, { client });
    await client.delete(ConfigMaps, source); // marked: the finalizer holds it
    assert.ok(client.peek(ConfigMaps, source)?.metadata?.deletionTimestamp);
    const refused = client.intercept(
      { verb: "delete", resource: ConfigMaps, namespace: "team-b", times: 1 },
      (call) => {
        throw serverErrors.conflict(call.context, ConfigMaps, call.name ?? "");
      },
    );

    const failed = await reconcileOnce(ConfigMapMirror, source, { client });
    assert.equal(refused.calls, 1);
    assert.ok(failed.error, "the cleanup's error reaches the controller, which retries");
    assert.deepEqual(client.peek(ConfigMaps, source)?.metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(await copies(client), ["team-b"]);

    const retried = await reconcileOnce(ConfigMapMirror, source, { client, attempt: 2 });
    assert.equal(retried.error, undefined);
    assert.deepEqual(await copies(client), []);
    assert.equal(client.peek(ConfigMaps, source), undefined, "the last finalizer gone, so is the source");
  });
});
