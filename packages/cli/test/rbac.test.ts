import { strict as assert } from "node:assert";
import { deriveRules, rbacManifests, type ControllerDeclaration } from "../src/index.js";

const widget = { group: "example.com", plural: "widgets" };
const configMaps = { group: "", plural: "configmaps" };

describe("RBAC derivation", () => {
  it("reads for kinds, updates their status and finalizers, writes owned kinds, reads watched ones", () => {
    const controllers: ControllerDeclaration[] = [
      {
        name: "widget",
        mode: "leader",
        for: widget,
        owns: [configMaps],
        watches: [{ group: "", plural: "secrets" }],
      },
    ];
    const { cluster, namespace } = deriveRules(controllers);
    assert.deepEqual(cluster, [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["example.com"], resources: ["widgets/finalizers"], verbs: ["update"] },
      { apiGroups: ["example.com"], resources: ["widgets/status"], verbs: ["get", "patch", "update"] },
    ]);
    assert.deepEqual(namespace, [
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "update"] },
    ]);
  });

  it("grants patch on the for kind to a controller that manages a finalizer, and nothing more", () => {
    const without = deriveRules([{ name: "widget", mode: "leader", for: widget, owns: [], watches: [] }]);
    const { cluster } = deriveRules([
      {
        name: "widget",
        mode: "leader",
        for: widget,
        owns: [],
        watches: [],
        finalizer: "example.com/cleanup",
      },
    ]);
    assert.deepEqual(
      cluster.find((r) => r.resources.includes("widgets")),
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "list", "patch", "watch"] },
    );
    assert.deepEqual(
      cluster.filter((r) => !r.resources.includes("widgets")),
      without.cluster.filter((r) => !r.resources.includes("widgets")),
      "no other rule changes: no update (PUT) of the object",
    );
  });

  it("merges what two controllers need, and gives a sharded ring its Leases and ConfigMap", () => {
    const gadget = { group: "example.com", plural: "gadgets" };
    const { cluster, namespace } = deriveRules([
      { name: "widget", mode: "sharded", for: widget, owns: [configMaps], watches: [] },
      { name: "gadget", mode: "sharded", for: gadget, owns: [configMaps], watches: [widget] },
    ]);
    assert.deepEqual(
      cluster.find((r) => r.resources.includes("widgets")),
      { apiGroups: ["example.com"], resources: ["gadgets", "widgets"], verbs: ["get", "list", "watch"] },
    );
    assert.equal(cluster.filter((r) => r.resources.includes("configmaps")).length, 1);
    // The ring's ConfigMap is covered by the cluster-wide grant of the owned ConfigMaps.
    assert.deepEqual(
      namespace.map((r) => r.resources[0]),
      ["leases"],
    );
    const noOwned = deriveRules([{ name: "w", mode: "sharded", for: widget, owns: [], watches: [] }]);
    assert.deepEqual(
      noOwned.namespace.map((r) => r.resources[0]),
      ["configmaps", "leases"],
    );
  });

  it("grants what a controller needs(...) beyond its kinds, merged with the rest", () => {
    const { cluster } = deriveRules([
      {
        name: "w",
        mode: "every-replica",
        for: widget,
        owns: [],
        watches: [],
        permissions: [
          { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
          { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["patch"] },
        ],
      },
    ]);
    assert.deepEqual(
      cluster.find((r) => r.resources.includes("secrets")),
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get"],
      },
    );
    assert.deepEqual(cluster.find((r) => r.resources.includes("widgets"))?.verbs, [
      "get",
      "list",
      "patch",
      "watch",
    ]);
  });

  it("grants status only for kinds that have it (a built-in kind's status is its own controller's)", () => {
    const { cluster } = deriveRules(
      [{ name: "cm", mode: "leader", for: configMaps, owns: [], watches: [] }],
      { hasStatus: (r) => r.group === "example.com" },
    );
    assert.ok(!cluster.some((r) => r.resources.includes("configmaps/status")));
    assert.ok(cluster.some((r) => r.resources.includes("configmaps/finalizers")));
  });

  it("asks for nothing in its namespace when every controller runs on every replica", () => {
    const { namespace } = deriveRules([
      { name: "w", mode: "every-replica", for: widget, owns: [], watches: [] },
    ]);
    assert.deepEqual(namespace, []);
  });

  it("grants a controller whose caches are all namespaced Roles in those namespaces, and no ClusterRole", () => {
    const rules = deriveRules([
      {
        name: "widget",
        mode: "leader",
        for: { ...widget, namespaces: ["team-a", "team-b"] },
        owns: [{ ...configMaps, namespaces: ["team-a", "team-b"] }],
        watches: [{ group: "", plural: "secrets", namespaces: ["vault"] }],
      },
    ]);
    assert.deepEqual(rules.cluster, []);
    assert.deepEqual(Object.keys(rules.inNamespaces), ["team-a", "team-b", "vault"]);
    assert.deepEqual(rules.inNamespaces["team-a"], [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      },
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["example.com"], resources: ["widgets/finalizers"], verbs: ["update"] },
      { apiGroups: ["example.com"], resources: ["widgets/status"], verbs: ["get", "patch", "update"] },
    ]);
    assert.deepEqual(rules.inNamespaces["vault"], [
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
    ]);
    const docs = rbacManifests("widgets", "team-a", rules) as {
      kind: string;
      metadata: { namespace?: string };
      rules?: unknown[];
    }[];
    assert.deepEqual(
      docs.map((d) => `${d.kind} ${d.metadata.namespace ?? ""}`),
      [
        "Role team-a",
        "RoleBinding team-a",
        "Role team-b",
        "RoleBinding team-b",
        "Role vault",
        "RoleBinding vault",
      ],
    );
    // The operator's own namespace holds its Lease and its scoped kinds in one Role.
    assert.equal(docs[0]?.rules?.length, 6);
  });

  it("keeps a kind cached in all namespaces in the ClusterRole, and grants no Role what it already grants", () => {
    const rules = deriveRules([
      { name: "a", mode: "every-replica", for: widget, owns: [configMaps], watches: [] },
      {
        name: "b",
        mode: "every-replica",
        for: { ...widget, namespaces: ["team-a"] },
        owns: [{ ...configMaps, namespaces: ["team-a"] }],
        watches: [],
      },
    ]);
    assert.ok(rules.cluster.some((r) => r.resources.includes("widgets")));
    assert.ok(rules.cluster.some((r) => r.resources.includes("events")));
    assert.deepEqual(rules.inNamespaces, {});
  });
});
