/** One RBAC PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  /** Only these objects (the operator's own webhook configurations, CRDs and certificate Secret). */
  resourceNames?: string[];
  verbs: string[];
}

/** What RBAC derivation reads of one controller's declaration. */
export interface ControllerDeclaration {
  readonly name: string;
  readonly mode: "leader" | "sharded" | "every-replica";
  readonly for: ResourceRef;
  readonly owns: readonly ResourceRef[];
  readonly watches: readonly ResourceRef[];
  /** The finalizer it manages (`finalizer(name)`): written with JSON patches of the `for` kind, so `patch`. */
  readonly finalizer?: string;
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
  /**
   * The namespaces the controller caches it in (its declaration's cache
   * option `namespaces`): granted there by Roles. Absent or empty: all
   * namespaces, granted by the ClusterRole.
   */
  readonly namespaces?: readonly string[];
}

/** The rules of an operator: cluster-wide ones and those in its own namespace. */
export interface DerivedRules {
  /** For the ClusterRole: the kinds it reconciles, owns and watches, and events. */
  readonly cluster: PolicyRule[];
  /** For the Role in the operator's namespace: Leases of leader election, the shard ring's Leases and ConfigMap. */
  readonly namespace: PolicyRule[];
  /**
   * For a Role in each namespace the controllers' caches are scoped to: the
   * kinds cached only there (and events, when every kind of a controller
   * is). Empty when every cache holds all namespaces.
   */
  readonly inNamespaces: Record<string, PolicyRule[]>;
}

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete"];

/**
 * Least-privilege rules from the controllers' declarations: a `for` kind is
 * read (get, list, watch), its status updated and patched (when it has a
 * status subresource, as `hasStatus` tells; a built-in kind's status belongs
 * to its own controller, so ask with `needs()`), and its
 * finalizers updated (what the OwnerReferencesPermissionEnforcement admission
 * plugin asks of an owner whose dependents block its deletion), and patched
 * when the controller manages a finalizer (the runtime adds and removes it
 * with JSON patches); an `owns`
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
  const scoped = new Map<string, Map<string, Set<string>>>(); // namespace -> the same, granted there only
  const add = (into: Map<string, Set<string>>, ref: ResourceRef, verbs: readonly string[]) => {
    const key = `${ref.group}\u0000${ref.plural}`;
    const set = into.get(key) ?? new Set<string>();
    for (const v of verbs) set.add(v);
    into.set(key, set);
  };
  /** Cluster-wide, or in each of `namespaces` when there are some. */
  const grant = (ref: ResourceRef, verbs: readonly string[], namespaces: readonly string[] = []) => {
    if (namespaces.length === 0) return add(grants, ref, verbs);
    for (const ns of namespaces) {
      const into = scoped.get(ns) ?? new Map<string, Set<string>>();
      add(into, ref, verbs);
      scoped.set(ns, into);
    }
  };
  let eventsEverywhere = false;
  const eventNamespaces = new Set<string>();
  for (const c of controllers) {
    const where = c.for.namespaces ?? [];
    grant(c.for, READ, where);
    if (hasStatus(c.for))
      grant({ group: c.for.group, plural: `${c.for.plural}/status` }, ["get", "patch", "update"], where);
    grant({ group: c.for.group, plural: `${c.for.plural}/finalizers` }, ["update"], where);
    if (c.finalizer !== undefined) grant(c.for, ["patch"], where);
    for (const o of c.owns) grant(o, [...READ, ...WRITE], o.namespaces);
    for (const w of c.watches) grant(w, READ, w.namespaces);
    for (const p of c.permissions ?? []) {
      for (const group of p.apiGroups) for (const plural of p.resources) grant({ group, plural }, p.verbs);
    }
    // Events are recorded on the objects reconciled: where its primary is cached.
    if (where.length === 0) eventsEverywhere = true;
    else for (const ns of where) eventNamespaces.add(ns);
  }
  const events = { group: "events.k8s.io", plural: "events" };
  if (eventsEverywhere) grant(events, ["create", "patch"]);
  else if (eventNamespaces.size > 0) grant(events, ["create", "patch"], [...eventNamespaces]);
  // What the ClusterRole grants everywhere needs no second grant in a namespace.
  const inNamespaces: Record<string, PolicyRule[]> = {};
  for (const [ns, nsGrants] of [...scoped].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [key, verbs] of nsGrants) {
      for (const v of grants.get(key) ?? []) verbs.delete(v);
      if (verbs.size === 0) nsGrants.delete(key);
    }
    if (nsGrants.size > 0) inNamespaces[ns] = toRules(nsGrants);
  }

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
  return { cluster: toRules(grants), namespace: toRules(namespace), inNamespaces };
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
 * `name` in `namespace`: a ClusterRole and its binding (when anything is
 * granted cluster-wide), a Role and RoleBinding in its own namespace (when
 * it needs any), and one in each namespace its caches are scoped to.
 */
export function rbacManifests(
  name: string,
  namespace: string,
  rules: DerivedRules,
): Record<string, unknown>[] {
  const subject = [{ kind: "ServiceAccount", name, namespace }];
  const docs: Record<string, unknown>[] = [];
  if (rules.cluster.length) {
    docs.push(
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
    );
  }
  const roles = new Map<string, PolicyRule[]>(Object.entries(rules.inNamespaces ?? {}));
  // The operator's own namespace first, with what it keeps there (Leases, the ring) and any scoped kinds.
  const own = [...rules.namespace, ...(roles.get(namespace) ?? [])];
  roles.delete(namespace);
  for (const [ns, nsRules] of [[namespace, own] as const, ...roles]) {
    if (nsRules.length === 0) continue;
    docs.push(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace: ns },
        rules: nsRules,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: subject,
      },
    );
  }
  return docs;
}
