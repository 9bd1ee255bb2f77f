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

/** The label that asks for a ConfigMap to be mirrored. */
export const MIRROR_LABEL = "mirror.example.com/mirror";
/** The annotation naming the namespaces to mirror into, comma-separated. */
export const NAMESPACES_ANNOTATION = "mirror.example.com/namespaces";
/** Labels on a copy naming its source. */
export const SOURCE_NAMESPACE_LABEL = "mirror.example.com/source-namespace";
export const SOURCE_NAME_LABEL = "mirror.example.com/source-name";
/** Held by a mirrored source until its copies are deleted (owner references cannot cross namespaces). */
export const FINALIZER = "mirror.example.com/copies";

/**
 * Mirrors each ConfigMap labelled `mirror.example.com/mirror: "true"` into
 * the namespaces its `mirror.example.com/namespaces` annotation lists, as
 * `<source-namespace>.<source-name>`. Copies follow the source's data; a copy
 * changed or deleted by hand is put back (its events lead to its source by
 * its name); a namespace dropped from the list loses its copy; a source that
 * is deleted, or loses its label, takes its copies with it, through a
 * finalizer. Leader-elected: one replica works, the others stand by.
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
    // ConfigMaps are the primary kind and also what it writes: declared for RBAC.
    return on
      .for(ConfigMaps)
      .needs({ apiGroups: [""], resources: ["configmaps"], verbs: ["create", "delete", "patch", "update"] })
      .mode("leader");
  }

  async reconcile(request: Request, ctx: ReconcileContext<V1ConfigMap>) {
    // A copy's key (`team-a/default.settings`) names its source: namespace names have no dots.
    const dot = request.name.indexOf(".");
    if (dot > 0) {
      const source = await this.client.get(ConfigMaps, {
        namespace: request.name.slice(0, dot),
        name: request.name.slice(dot + 1),
      });
      if (source?.metadata?.labels?.[MIRROR_LABEL] === "true") await this.mirror(source, ctx.signal);
    }
    const object = ctx.current();
    if (object) await this.mirror(object, ctx.signal);
  }

  private async mirror(source: V1ConfigMap, signal: AbortSignal): Promise<void> {
    const wanted = source.metadata?.labels?.[MIRROR_LABEL] === "true";
    if (!wanted) {
      // No longer mirrored: take the copies back, then let go of the source.
      if (source.metadata?.finalizers?.includes(FINALIZER)) {
        await this.deleteCopies(source, new Set(), signal);
        await removeFinalizer(this.api, ConfigMaps, source, FINALIZER, { signal });
      }
      return;
    }
    const state = await handleFinalizer(this.api, ConfigMaps, source, FINALIZER, async (s) => {
      await this.deleteCopies(s, new Set(), signal);
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
      await this.client.apply(
        ConfigMaps,
        {
          metadata: {
            name: `${namespace}.${name}`,
            namespace: target,
            labels: { [SOURCE_NAMESPACE_LABEL]: namespace, [SOURCE_NAME_LABEL]: name },
          },
          data: source.data ?? {},
        },
        { force: true, signal },
      );
    }
    const removed = await this.deleteCopies(source, targets, signal);
    if (removed.length) {
      this.events.record(source, {
        type: "Normal",
        reason: "CopiesRemoved",
        action: "Delete",
        note: `removed the copies in ${removed.join(", ")}`,
      });
    }
  }

  /** Deletes the source's copies outside `keep`; returns their namespaces. */
  private async deleteCopies(
    source: V1ConfigMap,
    keep: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<string[]> {
    const copies = await this.client.list(ConfigMaps, {
      labels: {
        [SOURCE_NAMESPACE_LABEL]: source.metadata!.namespace!,
        [SOURCE_NAME_LABEL]: source.metadata!.name!,
      },
    });
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
