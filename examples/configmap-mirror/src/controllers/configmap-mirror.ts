import type { V1ConfigMap } from "@kubernetes/client-node";
import {
  ConfigMaps,
  handleFinalizer,
  removeFinalizer,
  Tokens,
  type Client,
  type ControllerBuilder,
  type EventRecorder,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
} from "@tessera/runtime";

/** What the mirror uses of one reconcile's context: the copies by their index, and the signal. */
type Copies = Pick<ReconcileContext<V1ConfigMap>, "related" | "signal">;

/** The label that asks for a ConfigMap to be mirrored. */
export const MIRROR_LABEL = "mirror.example.com/mirror";
/** The value of {@link MIRROR_LABEL} on a copy: it keeps the copy in the controller's one cache. */
export const COPY = "copy";
/** The annotation naming the namespaces to mirror into, comma-separated. */
export const NAMESPACES_ANNOTATION = "mirror.example.com/namespaces";
/** Labels on a copy naming its source. */
export const SOURCE_NAMESPACE_LABEL = "mirror.example.com/source-namespace";
export const SOURCE_NAME_LABEL = "mirror.example.com/source-name";
/** The index of copies by their source's `namespace/name`, declared on the ConfigMap cache. */
export const SOURCE_INDEX = "mirror.example.com/source";

/** The source a copy names in its labels (none for a ConfigMap that is no copy). */
export function sourceOf(copy: V1ConfigMap): Request[] {
  const labels = copy.metadata?.labels ?? {};
  const namespace = labels[SOURCE_NAMESPACE_LABEL];
  const name = labels[SOURCE_NAME_LABEL];
  return namespace && name ? [{ namespace, name }] : [];
}

/** The index function of {@link SOURCE_INDEX}. */
function sourceKey(copy: V1ConfigMap): string[] {
  return sourceOf(copy).map(({ namespace, name }) => `${namespace}/${name}`);
}
/** The request of a ConfigMap. */
function keyOf(configMap: V1ConfigMap): Request {
  return { namespace: configMap.metadata?.namespace ?? "", name: configMap.metadata?.name ?? "" };
}

/** Held by a mirrored source until its copies are deleted (owner references cannot cross namespaces). */
export const FINALIZER = "mirror.example.com/copies";

/**
 * Mirrors each ConfigMap labelled `mirror.example.com/mirror: "true"` into
 * the namespaces its `mirror.example.com/namespaces` annotation lists, under
 * the source's name. Copies follow the source's data; a copy changed or
 * deleted by hand is put back (a watch of ConfigMaps maps a copy's events to
 * the source its labels name); a ConfigMap of that name that is no copy of
 * the source is left alone (a Warning Event says so); a namespace dropped
 * from the list loses its copy; a source that is deleted, or loses its
 * label, takes its copies with it, through a finalizer. Leader-elected: one
 * replica works, the others stand by.
 */
export class ConfigMapMirror implements ReconcilerPlugin<V1ConfigMap> {
  static readonly inject = [Tokens.Client, Tokens.ApiClient, Tokens.EventRecorder] as const;
  constructor(
    private readonly client: Client,
    // The finalizer helpers read fresh from the API server, not the cache.
    private readonly api: Client,
    private readonly events: EventRecorder,
  ) {}

  controller(on: ControllerBuilder) {
    // ConfigMaps are the primary kind and also what it writes: declared for RBAC. Its one cache
    // holds only what carries the mirror label, selected by the server: the sources (any value:
    // "true" mirrors, another lets go) and the copies (labelled "copy", and with their source).
    // No other ConfigMap of the cluster is cached. A copy's events wake its source, and the
    // copies of a source are found by an index of their labels.
    return on
      .for(ConfigMaps, { labels: MIRROR_LABEL, indexes: { [SOURCE_INDEX]: sourceKey } })
      .watches(ConfigMaps, sourceOf)
      .needs({ apiGroups: [""], resources: ["configmaps"], verbs: ["create", "delete", "patch", "update"] })
      .mode("leader");
  }

  async reconcile(request: Request, ctx: ReconcileContext<V1ConfigMap>) {
    const object = ctx.current();
    if (object) return this.mirror(object, ctx);
    // Not in the cache: deleted, or its mirror label removed (it left the cache's selector).
    // Only the API server can tell which, and whether it still holds the finalizer.
    const live = await this.api.get(ConfigMaps, request, { signal: ctx.signal });
    if (live?.metadata?.finalizers?.includes(FINALIZER)) return this.mirror(live, ctx);
    // Gone: copies left behind (the finalizer was removed by hand) go too.
    if (live === undefined) await this.deleteCopies(request, new Set(), ctx);
  }

  private async mirror(source: V1ConfigMap, ctx: Copies): Promise<void> {
    const signal = ctx.signal;
    const wanted = source.metadata?.labels?.[MIRROR_LABEL] === "true";
    if (!wanted) {
      // No longer mirrored: take the copies back, then let go of the source.
      if (source.metadata?.finalizers?.includes(FINALIZER)) {
        await this.deleteCopies(keyOf(source), new Set(), ctx);
        await removeFinalizer(this.api, ConfigMaps, source, FINALIZER, { signal });
      }
      return;
    }
    const state = await handleFinalizer(this.api, ConfigMaps, source, FINALIZER, async (s) => {
      await this.deleteCopies(keyOf(s), new Set(), ctx);
    });
    if (state !== "active") return;
    const namespace = source.metadata!.namespace!;
    const name = source.metadata!.name!;
    const targets = new Set(
      (source.metadata?.annotations?.[NAMESPACES_ANNOTATION] ?? "")
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n && n !== namespace),
    );
    for (const target of targets) {
      // The cache holds the copies only: a ConfigMap of that name it lacks is asked of the server.
      const there =
        (await this.client.get(ConfigMaps, { namespace: target, name }, { signal })) ??
        (await this.api.get(ConfigMaps, { namespace: target, name }, { signal }));
      if (there && sourceKey(there)[0] !== `${namespace}/${name}`) {
        this.events.record(source, {
          type: "Warning",
          reason: "CopyBlocked",
          action: "Apply",
          note: `${target}/${name} exists and is no copy of this ConfigMap: left alone`,
        });
        continue;
      }
      await this.client.apply(
        ConfigMaps,
        {
          metadata: {
            name,
            namespace: target,
            labels: {
              [MIRROR_LABEL]: COPY,
              [SOURCE_NAMESPACE_LABEL]: namespace,
              [SOURCE_NAME_LABEL]: name,
            },
          },
          data: source.data ?? {},
        },
        { force: true, signal },
      );
    }
    const removed = await this.deleteCopies(keyOf(source), targets, ctx);
    if (removed.length) {
      this.events.record(source, {
        type: "Normal",
        reason: "CopiesRemoved",
        action: "Delete",
        note: `removed the copies in ${removed.join(", ")}`,
      });
    }
  }

  /** Deletes the copies of the source `namespace/name` outside `keep`; returns their namespaces. */
  private async deleteCopies(source: Request, keep: ReadonlySet<string>, ctx: Copies): Promise<string[]> {
    const signal = ctx.signal;
    const copies = await ctx.related(ConfigMaps, SOURCE_INDEX, `${source.namespace}/${source.name}`);
    const removed: string[] = [];
    for (const copy of copies) {
      const ns = copy.metadata!.namespace!;
      if (keep.has(ns)) continue;
      await this.client.delete(ConfigMaps, { namespace: ns, name: copy.metadata!.name! }, { signal });
      removed.push(ns);
    }
    return removed;
  }
}
