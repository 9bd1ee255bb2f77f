import { strict as assert } from "node:assert";
import { toQueryString } from "../src/index.js";
import { collectionPath, defineResource, describeResource } from "@tessera/client";

describe("toQueryString", () => {
  it("sends every option set, and watch=1 for a watch", () => {
    const q = toQueryString(
      {
        labelSelector: "app=web",
        fieldSelector: "metadata.name!=x",
        shardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        resourceVersion: "12",
        resourceVersionMatch: "NotOlderThan",
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        timeoutSeconds: 450,
      },
      true,
    );
    const p = new URLSearchParams(q);
    assert.equal(p.get("watch"), "1");
    assert.equal(p.get("labelSelector"), "app=web");
    assert.equal(p.get("fieldSelector"), "metadata.name!=x");
    assert.equal(
      p.get("shardSelector"),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    );
    assert.equal(p.get("resourceVersion"), "12");
    assert.equal(p.get("resourceVersionMatch"), "NotOlderThan");
    assert.equal(p.get("sendInitialEvents"), "true");
    assert.equal(p.get("allowWatchBookmarks"), "true");
    assert.equal(p.get("timeoutSeconds"), "450");
  });

  it("sends an empty resourceVersion (watch-list on first start) and leaves absent options out", () => {
    assert.equal(
      toQueryString({ resourceVersion: "", limit: 500, continue: "" }, false),
      "limit=500&resourceVersion=",
    );
  });
});

describe("resource paths", () => {
  it("builds core, grouped, namespaced and cluster-scoped paths", () => {
    const cms = defineResource({
      group: "",
      version: "v1",
      kind: "ConfigMap",
      plural: "configmaps",
      scope: "Namespaced",
    });
    const widgets = defineResource({
      group: "example.com",
      version: "v1alpha1",
      kind: "Widget",
      plural: "widgets",
      scope: "Cluster",
    });
    assert.equal(collectionPath(cms), "/api/v1/configmaps");
    assert.equal(collectionPath(cms, "kube-system"), "/api/v1/namespaces/kube-system/configmaps");
    assert.equal(collectionPath(widgets, "ignored"), "/apis/example.com/v1alpha1/widgets");
    assert.equal(describeResource(cms), "configmaps");
    assert.equal(describeResource(widgets), "widgets.example.com");
  });
});
