import { createHash } from "node:crypto";
import type { ControlPlane } from "./control-plane.js";

interface PodLike {
  metadata: { name: string; namespace: string; uid: string };
  spec: { containers: { name: string; image?: string }[]; initContainers?: { name: string }[] };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/** Options for {@link markPodReady}. */
export interface MarkPodReadyOptions {
  /** The Pod IP to report; default one derived from the Pod's uid in 10.244.0.0/16. */
  podIP?: string;
}

/**
 * Plays the kubelet for one Pod: writes, through the status subresource, what
 * a kubelet reports once every container runs and passes its readiness probe
 * (phase Running, the PodScheduled, Initialized, ContainersReady and Ready
 * conditions True, a running status per container, a Pod IP). A test control
 * plane has no node, so without this a Deployment never becomes Available;
 * with it, the ReplicaSet and Deployment controllers (see
 * `ControlPlaneOptions.controllerManager`) count the Pod as ready.
 *
 * The Pod stays unscheduled (no `spec.nodeName`), which keeps its deletion
 * immediate: a bound Pod's graceful deletion would wait for a kubelet to
 * confirm it, and a namespace holding one would never go. The cost: the
 * endpointslice controller skips a Pod without a Node, so a Service's
 * EndpointSlice lists no endpoints for it.
 *
 * ```ts
 * await eventually("a pod", async () => (await markPodsReady(cp, "default")).length > 0);
 * ```
 */
export async function markPodReady(
  cp: ControlPlane,
  namespace: string,
  name: string,
  opts: MarkPodReadyOptions = {},
): Promise<void> {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
  const got = await cp.raw(path);
  if (got.status !== 200) {
    throw new Error(
      `markPodReady: get pod ${namespace}/${name}: HTTP ${got.status}: ${statusMessage(got.body)}`,
    );
  }
  const pod = JSON.parse(got.body) as PodLike;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const podIP = opts.podIP ?? podIPFor(pod.metadata.uid);
  const condition = (type: string) => ({
    type,
    status: "True",
    lastProbeTime: null,
    lastTransitionTime: now,
  });
  const status = {
    phase: "Running",
    conditions: ["PodScheduled", "Initialized", "ContainersReady", "Ready"].map(condition),
    hostIP: "127.0.0.1",
    hostIPs: [{ ip: "127.0.0.1" }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: now,
    containerStatuses: pod.spec.containers.map((c) => ({
      name: c.name,
      image: c.image ?? "",
      imageID: "",
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
  const res = await cp.raw(`${path}/status`, {
    method: "PATCH",
    body: JSON.stringify({ status }),
    headers: { "content-type": "application/merge-patch+json" },
  });
  if (res.status !== 200) {
    throw new Error(
      `markPodReady: patch status of pod ${namespace}/${name}: HTTP ${res.status}: ${statusMessage(res.body)}`,
    );
  }
}

/**
 * {@link markPodReady} for every Pod in `namespace` (matching
 * `labelSelector`, when given) that is not Ready yet and not being deleted.
 * Returns the names it marked; call it again (or from `eventually`) for Pods
 * created later.
 */
export async function markPodsReady(
  cp: ControlPlane,
  namespace: string,
  opts: { labelSelector?: string } = {},
): Promise<string[]> {
  const query = opts.labelSelector ? `?labelSelector=${encodeURIComponent(opts.labelSelector)}` : "";
  const res = await cp.raw(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods${query}`);
  if (res.status !== 200) {
    throw new Error(
      `markPodsReady: list pods in ${namespace}: HTTP ${res.status}: ${statusMessage(res.body)}`,
    );
  }
  const pods = (JSON.parse(res.body) as { items: (PodLike & { metadata: { deletionTimestamp?: string } })[] })
    .items;
  const marked: string[] = [];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) continue;
    await markPodReady(cp, namespace, pod.metadata.name);
    marked.push(pod.metadata.name);
  }
  return marked;
}

function podIPFor(uid: string): string {
  const [a, b] = createHash("sha256").update(uid).digest();
  return `10.244.${a}.${Math.max(1, Math.min(254, b!))}`;
}

function statusMessage(body: string): string {
  try {
    const status = JSON.parse(body) as { message?: string };
    if (status.message) return status.message;
  } catch {
    // not a Status: show the body itself
  }
  return body.slice(0, 300);
}
