/** One RBAC PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** What RBAC derivation reads of one controller's declaration. */
export interface ControllerDeclaration {
  readonly name: string;
  readonly mode: "leader" | "sharded" | "every-replica";
  readonly for: ResourceRef;
  readonly owns: readonly ResourceRef[];
  readonly watches: readonly ResourceRef[];
  /** What its `needs(...)` declares, granted cluster-wide as given. */
  readonly permissions?: readonly {
    apiGroups: readonly string[];
    resources: readonly string[];
    verbs: readonly string[];
  }[];
}

/** A resource by API group and plural (subresources as `plural/sub`). */
export interface ResourceRef {
  readonly group: string;
  readonly plural: string;
}

/** The rules of an operator: cluster-wide ones and those in its own namespace. */
export interface DerivedRules {
  /** For the ClusterRole: the kinds it reconciles, owns and watches, and events. */
  readonly cluster: PolicyRule[];
  /** For the Role in the operator's namespace: Leases of leader election, the shard ring's Leases and ConfigMap. */
  readonly namespace: PolicyRule[];
}

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete"];

/**
 * Least-privilege rules from the controllers' declarations: a `for` kind is
 * read (get, list, watch), its status updated and patched (when it has a
 * status subresource, as `hasStatus` tells; a built-in kind's status belongs
 * to its own controller, so ask with `needs()`), and its
 * finalizers updated (what the OwnerReferencesPermissionEnforcement admission
 * plugin asks of an owner whose dependents block its deletion); an `owns`
 * kind is read and written; a `watches` kind is read; events are created and
 * patched (series); what a controller `needs(...)` is granted as declared;
 * leader election reads and writes its Lease; the shard
 * ring its member Leases and assignment ConfigMap (less what the cluster-wide
 * rules already grant, as when the operator owns ConfigMaps). Rules for one API group
 * and verb set are merged, and everything is sorted, so the output is stable.
 */
export function deriveRules(
  controllers: readonly ControllerDeclaration[],
  options: { hasStatus?: (ref: ResourceRef) => boolean } = {},
): DerivedRules {
  const hasStatus = options.hasStatus ?? (() => true);
  const grants = new Map<string, Set<string>>(); // "group\u0000resource" -> verbs
  const grant = (ref: ResourceRef, verbs: readonly string[]) => {
    const key = `${ref.group}\u0000${ref.plural}`;
    const set = grants.get(key) ?? new Set<string>();
    for (const v of verbs) set.add(v);
    grants.set(key, set);
  };
  for (const c of controllers) {
    grant(c.for, READ);
    if (hasStatus(c.for))
      grant({ group: c.for.group, plural: `${c.for.plural}/status` }, ["get", "patch", "update"]);
    grant({ group: c.for.group, plural: `${c.for.plural}/finalizers` }, ["update"]);
    for (const o of c.owns) grant(o, [...READ, ...WRITE]);
    for (const w of c.watches) grant(w, READ);
    for (const p of c.permissions ?? []) {
      for (const group of p.apiGroups) for (const plural of p.resources) grant({ group, plural }, p.verbs);
    }
  }
  if (controllers.length) grant({ group: "events.k8s.io", plural: "events" }, ["create", "patch"]);

  const namespace = new Map<string, Set<string>>();
  const modes = new Set(controllers.map((c) => c.mode));
  const ns = (ref: ResourceRef, verbs: readonly string[]) => {
    const key = `${ref.group}\u0000${ref.plural}`;
    const set = namespace.get(key) ?? new Set<string>();
    for (const v of verbs) set.add(v);
    namespace.set(key, set);
  };
  if (modes.has("leader"))
    ns({ group: "coordination.k8s.io", plural: "leases" }, ["create", "get", "update"]);
  if (modes.has("sharded")) {
    ns({ group: "coordination.k8s.io", plural: "leases" }, [
      "create",
      "delete",
      "get",
      "list",
      "update",
      "watch",
    ]);
    ns({ group: "", plural: "configmaps" }, ["create", "get", "list", "update", "watch"]);
  }
  // What the ClusterRole already grants everywhere needs no second grant in the namespace.
  for (const [key, verbs] of namespace) {
    for (const v of grants.get(key) ?? []) verbs.delete(v);
    if (verbs.size === 0) namespace.delete(key);
  }
  return { cluster: toRules(grants), namespace: toRules(namespace) };
}

/** Groups resources that share an API group and verb set into one rule. */
function toRules(grants: Map<string, Set<string>>): PolicyRule[] {
  const byGroupAndVerbs = new Map<string, PolicyRule>();
  for (const [key, verbs] of grants) {
    const [group, resource] = key.split("\u0000") as [string, string];
    const sorted = [...verbs].sort();
    const id = `${group}\u0000${sorted.join(",")}`;
    const rule = byGroupAndVerbs.get(id) ?? { apiGroups: [group], resources: [], verbs: sorted };
    rule.resources.push(resource);
    byGroupAndVerbs.set(id, rule);
  }
  const rules = [...byGroupAndVerbs.values()];
  for (const r of rules) r.resources.sort();
  return rules.sort(
    (a, b) =>
      a.apiGroups[0]!.localeCompare(b.apiGroups[0]!) ||
      a.resources[0]!.localeCompare(b.resources[0]!) ||
      a.verbs.join().localeCompare(b.verbs.join()),
  );
}

/**
 * The RBAC manifests of an operator named `name` running as ServiceAccount
 * `name` in `namespace`: a ClusterRole and its binding, and (when it needs
 * any) a Role and RoleBinding in its own namespace.
 */
export function rbacManifests(
  name: string,
  namespace: string,
  rules: DerivedRules,
): Record<string, unknown>[] {
  const subject = [{ kind: "ServiceAccount", name, namespace }];
  const docs: Record<string, unknown>[] = [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: rules.cluster,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: subject,
    },
  ];
  if (rules.namespace.length) {
    docs.push(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace },
        rules: rules.namespace,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: subject,
      },
    );
  }
  return docs;
}
