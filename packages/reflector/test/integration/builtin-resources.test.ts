import { strict as assert } from "node:assert";
import type {
  CoreV1Event,
  EventsV1Event,
  V1Ingress,
  V1Node,
  V1PersistentVolumeClaim,
  V2HorizontalPodAutoscaler,
} from "@kubernetes/client-node";
import { useControlPlane, type ControlPlane } from "@tessera/testenv";
import * as builtins from "@tessera/client/resources";
import {
  APIServices,
  ConfigMaps,
  CustomResourceDefinitions,
  Events,
  EventsV1Events,
  HorizontalPodAutoscalers,
  Ingresses,
  Nodes,
  PersistentVolumeClaims,
  collectionPath,
  defineResource,
  describeResource,
  type Resource,
} from "@tessera/client";
import { TEST_WIRE, kubeListerWatcher, pool } from "../support/cluster.js";

// The generated handles carry client-node's model types; a mix-up does not compile.
export const ingresses: Resource<V1Ingress> = Ingresses;
export const hpas: Resource<V2HorizontalPodAutoscaler> = HorizontalPodAutoscalers;
export const pvcs: Resource<V1PersistentVolumeClaim> = PersistentVolumeClaims;
export const nodes: Resource<V1Node> = Nodes;
export const coreEvents: Resource<CoreV1Event> = Events;
export const eventsV1: Resource<EventsV1Event> = EventsV1Events;
// @ts-expect-error: Ingresses hold V1Ingress objects, not Nodes.
export const ingressesAsNodes: Resource<V1Node> = Ingresses;

/**
 * Listable built-in kinds the server serves that deliberately have no
 * handle, as `group/version Kind` (core: `v1 Kind`). Empty: the generator
 * makes one for every listable kind served by default; kinds that cannot be
 * listed (Binding, TokenReview, the access reviews) are not listable and so
 * not checked.
 */
const WITHOUT_HANDLE: ReadonlySet<string> = new Set<string>();

/** One top-level resource of the server's discovery (no subresources). */
interface Discovered {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs: string[];
}

interface Discovery {
  resources: Discovered[];
  /** Each group's served versions, in the server's priority order (the preferred one first). */
  versions: Map<string, string[]>;
}

async function getJson<T>(cp: ControlPlane, path: string): Promise<T> {
  const res = await cp.raw(path, { headers: { accept: "application/json" } });
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as T;
}

interface ApiResourceList {
  resources: { name: string; kind: string; namespaced: boolean; verbs: string[] }[];
}

/** The server's discovery, read the way kubectl reads it (/api, /apis, then each group version). */
async function discover(cp: ControlPlane): Promise<Discovery> {
  const core = await getJson<{ versions: string[] }>(cp, "/api");
  const apis = await getJson<{ groups: { name: string; versions: { version: string }[] }[] }>(cp, "/apis");
  const versions = new Map<string, string[]>([
    ["", core.versions],
    ...apis.groups.map((g) => [g.name, g.versions.map((v) => v.version)] as [string, string[]]),
  ]);
  const resources: Discovered[] = [];
  for (const [group, groupVersions] of versions) {
    for (const version of groupVersions) {
      const list = await getJson<ApiResourceList>(
        cp,
        group === "" ? `/api/${version}` : `/apis/${group}/${version}`,
      );
      for (const r of list.resources) {
        if (r.name.includes("/")) continue;
        resources.push({
          group,
          version,
          kind: r.kind,
          plural: r.name,
          namespaced: r.namespaced,
          verbs: r.verbs,
        });
      }
    }
  }
  return { resources, versions };
}

const gvk = (group: string, version: string, kind: string): string =>
  `${group === "" ? "" : `${group}/`}${version} ${kind}`;

/**
 * Where `handles` and the server disagree: a handle whose kind the server
 * does not serve, that is not at the preferred version serving its kind, or
 * whose plural or scope differ; a listable kind with no handle.
 */
function disagreements(handles: readonly Resource[], discovery: Discovery): string[] {
  const problems: string[] = [];
  /** The discovered resource of a group's kind at the highest-priority version serving it. */
  const preferred = (group: string, kind: string): Discovered | undefined => {
    for (const version of discovery.versions.get(group) ?? []) {
      const found = discovery.resources.find(
        (r) => r.group === group && r.version === version && r.kind === kind,
      );
      if (found) return found;
    }
    return undefined;
  };
  for (const h of handles) {
    const name = `${h.kind} (${describeResource(h)})`;
    const served = preferred(h.group, h.kind);
    if (!served) {
      problems.push(`${name}: the server serves no ${h.kind} in group "${h.group}"`);
      continue;
    }
    if (served.version !== h.version) {
      problems.push(`${name}: version ${h.version}, but the server prefers ${served.version}`);
    }
    if (served.plural !== h.plural)
      problems.push(`${name}: plural ${h.plural}, the server's is ${served.plural}`);
    if (served.namespaced !== (h.scope === "Namespaced")) {
      problems.push(`${name}: scope ${h.scope}, the server says namespaced: ${served.namespaced}`);
    }
    if (!served.verbs.includes("list")) problems.push(`${name}: the server cannot list it`);
  }
  for (const r of discovery.resources) {
    if (!r.verbs.includes("list") || preferred(r.group, r.kind) !== r) continue;
    const id = gvk(r.group, r.version, r.kind);
    if (WITHOUT_HANDLE.has(id)) continue;
    if (!handles.some((h) => h.group === r.group && h.kind === r.kind)) {
      problems.push(`${id} (${r.plural}) is listable but has no handle`);
    }
  }
  return problems;
}

const handles: Resource[] = Object.values(builtins);
/**
 * Built-in kinds whose protobuf messages live outside k8s.io/api (in
 * apiextensions-apiserver and kube-aggregator), which the protobuf decoder
 * does not have: the protobuf wire asks for them in JSON.
 */
const JSON_ONLY: ReadonlySet<Resource> = new Set([CustomResourceDefinitions, APIServices]);

describe("the generated built-in resource handles, against a real kube-apiserver", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  let discovery: Discovery;

  before(async function () {
    discovery = await discover(env.cp);
  });

  it("has one for every kind named in the issue, and the existing ones unchanged", () => {
    const names = Object.keys(builtins);
    for (const name of [
      "Ingresses",
      "PersistentVolumeClaims",
      "CronJobs",
      "Roles",
      "RoleBindings",
      "NetworkPolicies",
      "HorizontalPodAutoscalers",
      "PodDisruptionBudgets",
      "Nodes",
      "EndpointSlices",
    ]) {
      assert.ok(names.includes(name), `${name} is not generated`);
    }
    assert.deepEqual(
      { ...ConfigMaps },
      {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        scope: "Namespaced",
        apiVersion: "v1",
      },
    );
    assert.equal(HorizontalPodAutoscalers.apiVersion, "autoscaling/v2");
    assert.equal(EventsV1Events.apiVersion, "events.k8s.io/v1");
  });

  it("matches the server's discovery: group, preferred version, plural and scope; no listable kind left out", () => {
    assert.ok(handles.length >= 60, `only ${handles.length} handles`);
    assert.deepEqual(disagreements(handles, discovery), []);
  });

  it("finds a wrong handle and a missing one (so the comparison above can fail)", () => {
    const wrong = [
      ...handles.filter((h) => h !== Ingresses && h !== Nodes && h !== HorizontalPodAutoscalers),
      defineResource({ group: "", version: "v1", kind: "Node", plural: "node", scope: "Namespaced" }),
      defineResource({
        group: "autoscaling",
        version: "v1",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        scope: "Namespaced",
      }),
    ];
    assert.deepEqual(disagreements(wrong, discovery), [
      "Node (node): plural node, the server's is nodes",
      "Node (node): scope Namespaced, the server says namespaced: false",
      "HorizontalPodAutoscaler (horizontalpodautoscalers.autoscaling): version v1, but the server prefers v2",
      "networking.k8s.io/v1 Ingress (ingresses) is listable but has no handle",
    ]);
  });

  it(`lists every handle's collection over ${TEST_WIRE}, in all namespaces and in one`, async () => {
    const failures: string[] = [];
    await pool(handles.length, 8, async (i) => {
      const h = handles[i]!;
      for (const namespace of h.scope === "Namespaced" ? [undefined, "default"] : [undefined]) {
        const where = collectionPath(h, namespace);
        try {
          const lw = kubeListerWatcher(env.cp.kubeConfig, h, namespace ? { namespace } : {});
          const list = await lw.list({ limit: 500 });
          if (!Array.isArray(list.items)) failures.push(`${where}: no items`);
          // Protobuf, when asked for, except for the kinds the decoder has no message for.
          const wire = TEST_WIRE === "protobuf" && !JSON_ONLY.has(h) ? "protobuf" : "json";
          if (lw.lastWire !== wire) failures.push(`${where}: answered in ${lw.lastWire}, not ${wire}`);
          for (const item of list.items) {
            if (namespace && item.metadata?.namespace !== namespace) {
              failures.push(`${where}: ${item.metadata?.name} is in ${item.metadata?.namespace}`);
            }
          }
        } catch (err) {
          failures.push(`${where}: ${(err as Error).message}`);
        }
      }
    });
    assert.deepEqual(failures, []);
  });
});
