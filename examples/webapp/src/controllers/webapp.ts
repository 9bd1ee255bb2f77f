import type { Clock } from "@tessera/runtime";
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { V1Deployment, V1Secret } from "@kubernetes/client-node";
import {
  CleanupResult,
  ConfigMaps,
  Deployments,
  Secrets,
  Services,
  requestOf,
  applyStatusIfChanged,
  findCondition,
  isNotFound,
  setCondition,
  setControllerReference,
  Tokens,
  type Client,
  type Condition,
  type ControllerBuilder,
  type EventRecorder,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
  type Result,
} from "@tessera/runtime";
import type { Predicate } from "@tessera/runtime/predicates";
import { WebApps, type WebApp } from "../generated/webapp.js";

/**
 * Held by every WebApp until its Deployment, and so its Pods, are gone. The
 * garbage collector removes the Service and the ConfigMap with the WebApp, so
 * no Pod ever runs without the configuration it reads or the Service in
 * front of it.
 */
export const FINALIZER = "apps.example.com/ordered-teardown";

/** The labels on everything a WebApp owns; its Pods are selected by them. */
export const labelsFor = (name: string) => ({
  "app.kubernetes.io/name": "webapp",
  "app.kubernetes.io/instance": name,
  "app.kubernetes.io/managed-by": "webapp-operator",
});

/** The annotation on the Pod template carrying a hash of spec.config, so a change rolls the Pods. */
export const CONFIG_HASH_ANNOTATION = "apps.example.com/config-hash";
/** The annotation on the Pod template carrying a hash of the data of the Secret spec.secretName names. */
export const SECRET_HASH_ANNOTATION = "apps.example.com/secret-hash";
/** The index of WebApps by the Secret their spec names, declared on the WebApp cache. */
export const SECRET_INDEX = "spec.secretName";

/**
 * The index function of {@link SECRET_INDEX}: one function for the module, so
 * every declaration of the controller declares the same index.
 */
function secretNameOf(webapp: WebApp): string[] {
  return webapp.spec.secretName ? [webapp.spec.secretName] : [];
}

/** Only a change of a Secret's data rolls Pods: its labels, annotations and resyncs do not. */
export const secretDataChanged: Predicate<V1Secret> = {
  name: "secretDataChanged",
  update: (oldSecret, newSecret) => !isDeepStrictEqual(oldSecret.data, newSecret.data),
};

/**
 * Serves each WebApp: a ConfigMap of its `spec.config`, a Deployment of its
 * image that takes its environment from that ConfigMap, and a Service in
 * front of it, all written with server-side apply and owned by the WebApp.
 * Reports `Available`, `Progressing` and `Degraded` from the Deployment's
 * status (as `kubectl rollout status` reads it), records an Event when one
 * of them changes, and tears down in order through a finalizer the runtime
 * manages (`cleanup`). Runs on the elected leader.
 */
export class WebAppReconciler implements ReconcilerPlugin<WebApp> {
  static readonly inject = [Tokens.Client, Tokens.Clock, Tokens.EventRecorder] as const;
  constructor(
    private readonly client: Client,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
  ) {}

  controller(on: ControllerBuilder) {
    return (
      on
        .for(WebApps, {
          // Each WebApp filed under the Secret it names: the Secret's mapper reads it.
          indexes: { [SECRET_INDEX]: secretNameOf },
        })
        // A Secret whose data changes wakes the WebApps of its namespace that name it.
        .watches(
          Secrets,
          async (secret, { client, signal }) =>
            (
              await client.list(WebApps, {
                namespace: secret.metadata?.namespace ?? "",
                index: { name: SECRET_INDEX, value: secret.metadata?.name ?? "" },
                signal,
              })
            ).map(requestOf),
          { predicates: [secretDataChanged] },
        )
        .owns(Deployments)
        .owns(Services)
        .owns(ConfigMaps)
        // Added before the first reconcile, removed once cleanup() is done.
        .finalizer(FINALIZER)
        .mode("leader")
    );
  }

  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<WebApp>): Promise<Result> {
    // From the cache; undefined once deleted. One being deleted goes to cleanup() instead.
    const webapp = ctx.current();
    if (!webapp) return;

    const spec = webapp.spec;
    const labels = labelsFor(name);
    const config = spec.config ?? {};
    const port = spec.port ?? 8080;
    const write = { force: true, signal: ctx.signal };
    // Read from the cache of Secrets; one not there yet rolls the Pods once it appears.
    const secret = spec.secretName
      ? await this.client.get(Secrets, { namespace, name: spec.secretName }, { signal: ctx.signal })
      : undefined;
    const secretHash: Record<string, string> = spec.secretName
      ? { [SECRET_HASH_ANNOTATION]: hashOf(secret?.data ?? {}) }
      : {};
    await this.client.apply(
      ConfigMaps,
      setControllerReference(webapp, { metadata: { name, namespace, labels }, data: config }),
      write,
    );
    const deployment = await this.client.apply(
      Deployments,
      setControllerReference(webapp, {
        metadata: { name, namespace, labels },
        spec: {
          replicas: spec.replicas ?? 1,
          progressDeadlineSeconds: spec.progressDeadlineSeconds ?? 600,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels, annotations: { [CONFIG_HASH_ANNOTATION]: hashOf(config), ...secretHash } },
            spec: {
              containers: [
                {
                  name: "web",
                  image: spec.image,
                  ports: [{ name: "http", containerPort: port }],
                  envFrom: [
                    { configMapRef: { name } },
                    ...(spec.secretName ? [{ secretRef: { name: spec.secretName } }] : []),
                  ],
                  readinessProbe: { httpGet: { path: "/", port: "http" } },
                },
              ],
            },
          },
        },
      }),
      write,
    );
    await this.client.apply(
      Services,
      setControllerReference(webapp, {
        metadata: { name, namespace, labels },
        spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: "http" }] },
      }),
      write,
    );

    const generation = webapp.metadata?.generation;
    const now = this.clock.wallTime();
    let conditions = webapp.status?.conditions;
    for (const input of conditionsFrom(deployment)) {
      conditions = setCondition(conditions, { ...input, observedGeneration: generation }, now).conditions;
      if (findCondition(webapp.status?.conditions, input.type)?.status !== input.status) {
        this.events.record(webapp, {
          type: input.type === "Degraded" && input.status === "True" ? "Warning" : "Normal",
          reason: input.reason,
          action: "Reconcile",
          note: `${input.type} is ${input.status}: ${input.message}`,
        });
      }
    }
    try {
      await applyStatusIfChanged(
        this.client,
        WebApps,
        webapp,
        {
          observedGeneration: generation,
          readyReplicas: deployment.status?.readyReplicas ?? 0,
          url: `http://${name}.${namespace}.svc`,
          conditions,
        },
        { signal: ctx.signal },
      );
    } catch (err) {
      if (isNotFound(err)) return; // deleted since the cache was read
      throw err;
    }
  }

  /**
   * The ordered teardown: deletes the Deployment in the foreground and keeps
   * the WebApp until the Deployment and its Pods are gone; the runtime then
   * removes the finalizer. The Deployment is read from the cache: its
   * deletion is an event of an owned object and wakes this cleanup; the
   * requeue is a backstop.
   */
  async cleanup(webapp: WebApp, ctx: ReconcileContext<WebApp>): Promise<CleanupResult> {
    const ref = { name: webapp.metadata!.name!, namespace: webapp.metadata!.namespace! };
    const deployment = await this.client.get(Deployments, ref, { signal: ctx.signal });
    if (!deployment) return CleanupResult.done;
    if (!deployment.metadata?.deletionTimestamp) {
      await this.client.delete(Deployments, ref, { propagationPolicy: "Foreground", signal: ctx.signal });
      this.events.record(webapp, {
        type: "Normal",
        reason: "TearingDown",
        action: "Delete",
        note: `deleting Deployment ${ref.name} and its Pods before the WebApp goes`,
      });
    }
    return CleanupResult.keep({ requeueAfterMs: 5_000 });
  }
}

type ConditionType = "Available" | "Progressing" | "Degraded";
type WebAppCondition = Pick<Condition, "status" | "reason" | "message"> & { type: ConditionType };

/**
 * The WebApp's three conditions from its Deployment, read the way `kubectl
 * rollout status` reads a rollout: complete when the controller has seen the
 * newest spec and every replica is updated and available.
 */
export function conditionsFrom(deployment: V1Deployment): WebAppCondition[] {
  const status = deployment.status ?? {};
  const wanted = deployment.spec?.replicas ?? 1;
  const seen = (status.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0);
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  const of = (type: string) => status.conditions?.find((c) => c.type === type);

  const deploymentAvailable = of("Available");
  const availableCondition: WebAppCondition =
    deploymentAvailable?.status === "True" && seen
      ? {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: `${available}/${wanted} Pods available`,
        }
      : {
          type: "Available",
          status: "False",
          reason: deploymentAvailable?.reason ?? "Deploying",
          message: `${available}/${wanted} Pods available`,
        };

  const stuck = of("Progressing");
  const failure = of("ReplicaFailure");
  const degraded: WebAppCondition =
    stuck?.status === "False" && stuck.reason === "ProgressDeadlineExceeded"
      ? {
          type: "Degraded",
          status: "True",
          reason: "ProgressDeadlineExceeded",
          message: stuck.message ?? "no progress",
        }
      : failure?.status === "True"
        ? {
            type: "Degraded",
            status: "True",
            reason: failure.reason ?? "ReplicaFailure",
            message: failure.message ?? "",
          }
        : { type: "Degraded", status: "False", reason: "AsExpected", message: "the rollout is not stuck" };

  const complete = seen && updated === wanted && available === wanted && total === wanted;
  const counts = `${updated}/${wanted} Pods updated, ${available} available, ${Math.max(total - updated, 0)} old`;
  const progressing: WebAppCondition = complete
    ? { type: "Progressing", status: "False", reason: "RolloutComplete", message: counts }
    : degraded.reason === "ProgressDeadlineExceeded"
      ? { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: counts }
      : { type: "Progressing", status: "True", reason: "RollingOut", message: counts };
  return [availableCondition, progressing, degraded];
}

/** A short, stable hash of the configuration: keys sorted, so order does not matter. */
function hashOf(config: Record<string, string>): string {
  const sorted = Object.keys(config)
    .sort()
    .map((key) => [key, config[key]]);
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex").slice(0, 16);
}
