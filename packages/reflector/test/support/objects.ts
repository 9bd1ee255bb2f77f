import type { WatchEvent } from "../../src/index.js";
import type { KubeObject, ObjectList } from "@tessera/client";

/** A ConfigMap-like object for unit tests. */
export interface TestObject extends KubeObject {
  data?: Record<string, string>;
}

export function cm(
  name: string,
  rv: string,
  data: Record<string, string> = {},
  namespace = "default",
): TestObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, resourceVersion: rv },
    data,
  };
}

export function list(rv: string, items: TestObject[], continueToken?: string): ObjectList<TestObject> {
  return {
    kind: "ConfigMapList",
    metadata: { resourceVersion: rv, ...(continueToken ? { continue: continueToken } : {}) },
    items,
  };
}

export const added = (o: TestObject): WatchEvent<TestObject> => ({ type: "ADDED", object: o });
export const modified = (o: TestObject): WatchEvent<TestObject> => ({ type: "MODIFIED", object: o });
export const deleted = (o: TestObject): WatchEvent<TestObject> => ({ type: "DELETED", object: o });
export const bookmark = (rv: string): WatchEvent<TestObject> => ({
  type: "BOOKMARK",
  object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
});
export const endBookmark = (rv: string): WatchEvent<TestObject> => ({
  type: "BOOKMARK",
  object: {
    kind: "ConfigMap",
    metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } },
  },
});
