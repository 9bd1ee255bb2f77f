// The data every informer benchmark loads: ConfigMaps of about 1 KiB as JSON
// (about 820 bytes of text plus metadata), labelled so that label and shard
// selectors have something to pick, created through the API 64 at a time.
// The text is words drawn from a vocabulary of 256 by a generator seeded
// with the object's number: it compresses about as well as configuration
// text does, where a repeated character would make gzip look far better
// than it is.
import { pool, post } from "../lib/apiserver.js";

const VOCABULARY = Array.from({ length: 256 }, (_, i) => {
  // Deterministic words of 3 to 9 letters.
  let x = (i + 1) * 2654435761;
  let word = "";
  for (let n = 3 + (i % 7); n > 0; n--) {
    x = (x * 1103515245 + 12345) >>> 0;
    word += String.fromCharCode(97 + ((x >>> 16) % 26));
  }
  return word;
});

/** About `bytes` of words, the same for the same `seed`. */
export function text(seed, bytes = 820) {
  let x = (seed * 2246822519 + 1) >>> 0;
  const words = [];
  for (let length = 0; length < bytes;) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    const word = VOCABULARY[x & 255];
    words.push(word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, bytes);
}

/** The ConfigMap number `i` of a benchmark's data set. */
export function configMap(i) {
  return {
    metadata: { name: `cm-${String(i).padStart(6, "0")}`, labels: { app: "bench", shard: String(i % 16) } },
    data: { config: text(i), index: String(i) },
  };
}

/**
 * Creates the namespace (if new) and `count` ConfigMaps numbered from `from` in it.
 * @param {import("@tessera/testenv").ControlPlane} cp
 * @param {string} namespace
 * @param {number} count
 * @param {number} [from]
 */
export async function populate(cp, namespace, count, from = 0) {
  const ns = await cp.raw(`/api/v1/namespaces/${namespace}`);
  if (ns.status === 404) await post(cp, "/api/v1/namespaces", { metadata: { name: namespace } });
  await pool(count, 64, (i) => post(cp, `/api/v1/namespaces/${namespace}/configmaps`, configMap(from + i)));
}

/**
 * Pod number `i` as a Deployment's ReplicaSet makes it, scheduled and running:
 * two containers with probes, resources, env and the service-account volume;
 * its status (conditions, IPs, container states) is written after creation,
 * through the status subresource, as a kubelet would.
 */
export function pod(i) {
  const name = `web-7d9f8c6b5-${String(i).padStart(6, "0")}`;
  const container = (n, image, port) => ({
    name: n,
    image,
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "LOG_LEVEL", value: "info" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
      { name: "POD_IP", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } } },
      { name: "CONFIG", value: text(i, 60) },
    ],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
    livenessProbe: {
      httpGet: { path: "/healthz", port, scheme: "HTTP" },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port, scheme: "HTTP" },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: "kube-api-access", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
    ],
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
    securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ["ALL"] } },
  });
  return {
    metadata: {
      name,
      generateName: "web-7d9f8c6b5-",
      labels: { app: "web", "pod-template-hash": "7d9f8c6b5", shard: String(i % 16) },
      annotations: { "kubectl.kubernetes.io/restartedAt": "2026-12-01T10:00:00Z" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web-7d9f8c6b5",
          uid: "0b6c3d8e-5f1a-4c2b-9d7e-3a4f5b6c7d8e",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        container("web", "registry.example.com/web:1.42.0", 8080),
        container("sidecar", "registry.example.com/proxy:2.3.1", 9090),
      ],
      volumes: [
        {
          name: "kube-api-access",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [
                    { path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
                  ],
                },
              },
            ],
          },
        },
      ],
      nodeName: `node-${i % 50}`,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      securityContext: { fsGroup: 2000, seccompProfile: { type: "RuntimeDefault" } },
      schedulerName: "default-scheduler",
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
        {
          key: "node.kubernetes.io/unreachable",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
  };
}

/** The status a kubelet reports for pod `i` once both containers run and are ready. */
export function podStatus(i) {
  const at = (s) =>
    `2026-12-01T10:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}Z`;
  const t = i % 3600;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const hostIP = `192.168.0.${i % 50}`;
  const running = (n, image, digest) => ({
    name: n,
    state: { running: { startedAt: at(t + 3) } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image,
    imageID: `${image.split(":")[0]}@sha256:${digest}`,
    containerID: `containerd://${text(i * 2 + n.length, 64)
      .replace(/[^a-f0-9]/g, "a")
      .slice(0, 64)
      .padEnd(64, "0")}`,
    started: true,
    volumeMounts: [
      {
        name: "kube-api-access",
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
        recursiveReadOnly: "Disabled",
      },
    ],
  });
  return {
    status: {
      phase: "Running",
      conditions: [
        {
          type: "PodReadyToStartContainers",
          status: "True",
          lastProbeTime: null,
          lastTransitionTime: at(t + 2),
        },
        { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: at(t) },
        { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: at(t + 14) },
        { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: at(t + 14) },
        { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: at(t) },
      ],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: at(t + 1),
      containerStatuses: [
        running("sidecar", "registry.example.com/proxy:2.3.1", "5f2b".repeat(16)),
        running("web", "registry.example.com/web:1.42.0", "9c1e".repeat(16)),
      ],
      qosClass: "Burstable",
    },
  };
}

/**
 * Creates `count` running Pods (see {@link pod}) in `namespace`: each created,
 * then its status written through the status subresource.
 * @param {import("@tessera/testenv").ControlPlane} cp
 */
export async function populatePods(cp, namespace, count) {
  const ns = await cp.raw(`/api/v1/namespaces/${namespace}`);
  if (ns.status === 404) await post(cp, "/api/v1/namespaces", { metadata: { name: namespace } });
  await pool(count, 64, async (i) => {
    const body = pod(i);
    await post(cp, `/api/v1/namespaces/${namespace}/pods`, body);
    for (let attempt = 0; ; attempt++) {
      const res = await cp.raw(`/api/v1/namespaces/${namespace}/pods/${body.metadata.name}/status`, {
        method: "PATCH",
        body: JSON.stringify(podStatus(i)),
        headers: { "content-type": "application/merge-patch+json" },
      });
      if (res.status === 200) return;
      if (attempt > 20 || (res.status !== 429 && res.status < 500))
        throw new Error(`PATCH pod ${body.metadata.name}/status: ${res.status} ${res.body.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}
