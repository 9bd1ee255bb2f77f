// Bytes of heap per cached object: ConfigMaps of about 1 KiB and Pods shaped
// like a Deployment's (two containers with env, probes, resources, volumes),
// cached by Tessera's SharedIndexInformer and by @kubernetes/client-node's
// informer, each with and without managedFields stripped (plus Tessera's
// metadata-only informer). Every variant runs in its own child process
// (node --expose-gc) against a real kube-apiserver (@tessera/testenv); the
// heap after a full GC is read before the start and after the sync, at two
// collection sizes, and the per-object figure is the slope between them, so
// fixed costs (modules, connections, buffers) cancel out. Medians of RUNS.
// Run: bash scripts/with-node.sh npm run build && bash scripts/with-node.sh node bench/informers/memory.js
//      (RUNS=3, SMALL=1000, LARGE=5000 by default; needs the control-plane binaries, see packages/testenv)
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlPlane } from "@tessera/testenv";
import { writeResult } from "../lib/results.js";

const RUNS = Number(process.env.RUNS ?? 3);
const SMALL = Number(process.env.SMALL ?? 1000);
const LARGE = Number(process.env.LARGE ?? 5000);
const VARIANTS = [
  "tessera",
  "tessera-stripped",
  "tessera-metadata",
  "tessera-metadata-stripped",
  "client-node",
  "client-node-stripped",
];
const KINDS = ["configmaps", "pods"];
const child = fileURLToPath(new URL("./memory-variant.js", import.meta.url));
const FILLER = "x".repeat(820); // with its metadata, a ConfigMap of about 1 KiB as JSON

async function pool(count, concurrency, work) {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function post(cp, path, body, allowConflict = false) {
  for (let attempt = 0; ; attempt++) {
    const res = await cp.raw(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    if (res.status === 201 || (allowConflict && res.status === 409)) return;
    if (res.status !== 429 && res.status < 500)
      throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 200)}`);
    if (attempt > 20) throw new Error(`POST ${path}: ${res.status} after retries`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function configMap(i) {
  return {
    metadata: { name: `cm-${String(i).padStart(6, "0")}`, labels: { app: "bench", shard: String(i % 16) } },
    data: { filler: FILLER, index: String(i) },
  };
}

/** A Pod as a Deployment's ReplicaSet would create it (no kubelet runs, so its status stays Pending). */
function pod(i) {
  const name = `web-7d4b9c8f6d-${String(i).padStart(6, "0")}`;
  const container = (n, image, port) => ({
    name: n,
    image,
    imagePullPolicy: "IfNotPresent",
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "LOG_LEVEL", value: "info" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
      {
        name: "POD_NAMESPACE",
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
      },
      { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "db", key: "url" } } },
    ],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "512Mi" } },
    readinessProbe: {
      httpGet: { path: "/healthz", port, scheme: "HTTP" },
      periodSeconds: 10,
      timeoutSeconds: 1,
    },
    livenessProbe: {
      httpGet: { path: "/livez", port, scheme: "HTTP" },
      initialDelaySeconds: 10,
      periodSeconds: 20,
    },
    volumeMounts: [
      { name: "config", mountPath: "/etc/web", readOnly: true },
      { name: "cache", mountPath: "/var/cache/web" },
    ],
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
  });
  return {
    metadata: {
      name,
      labels: { app: "web", "pod-template-hash": "7d4b9c8f6d", tier: "frontend" },
      annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9090" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web-7d4b9c8f6d",
          uid: "6f1c2a9e-3b7d-4f8e-9a1b-2c3d4e5f6a7b",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        container("web", "registry.example.com/web:1.42.0", 8080),
        container("sidecar", "registry.example.com/proxy:2.3.1", 9090),
      ],
      volumes: [
        { name: "config", configMap: { name: "web-config", defaultMode: 420 } },
        { name: "cache", emptyDir: {} },
      ],
      nodeSelector: { "kubernetes.io/os": "linux" },
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
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
    },
  };
}

async function populate(cp, kind, namespace, count) {
  await post(cp, "/api/v1/namespaces", { metadata: { name: namespace } });
  // No controller-manager runs here: the ServiceAccount admission plugin needs the default account made by hand.
  if (kind === "pods") {
    await post(
      cp,
      `/api/v1/namespaces/${namespace}/serviceaccounts`,
      { metadata: { name: "default" } },
      true,
    );
  }
  const make = kind === "pods" ? pod : configMap;
  await pool(count, 32, (i) => post(cp, `/api/v1/namespaces/${namespace}/${kind}`, make(i)));
}

/** Mean JSON size of the objects of a namespace, with and without managedFields. */
async function jsonSizes(cp, kind, namespace) {
  const res = await cp.raw(`/api/v1/namespaces/${namespace}/${kind}`);
  const items = JSON.parse(res.body).items;
  let full = 0;
  let stripped = 0;
  for (const item of items) {
    full += JSON.stringify(item).length;
    const { managedFields: _drop, ...metadata } = item.metadata;
    stripped += JSON.stringify({ ...item, metadata }).length;
  }
  return { full: full / items.length, stripped: stripped / items.length };
}

function runVariant(variant, kind, kubeconfig, namespace, expected) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", child, variant, kind, kubeconfig, namespace, String(expected)],
      { maxBuffer: 1 << 20, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${variant} ${kind}: ${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
      },
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const cp = new ControlPlane();
await cp.start();
try {
  const kubeconfig = cp.writeKubeconfig(join(mkdtempSync(join(tmpdir(), "informers-bench-")), "kubeconfig"));
  const namespaces = {};
  const sizes = {};
  for (const kind of KINDS) {
    for (const count of [SMALL, LARGE]) {
      const ns = `${kind}-${count}`;
      const t0 = performance.now();
      await populate(cp, kind, ns, count);
      console.error(`populated ${ns} in ${Math.round(performance.now() - t0)} ms`);
      namespaces[`${kind}/${count}`] = ns;
    }
    sizes[kind] = await jsonSizes(cp, kind, namespaces[`${kind}/${LARGE}`]);
  }
  // deltas[kind][variant][count] = [heap delta of each run]
  const deltas = {};
  for (let run = 0; run < RUNS; run++) {
    for (const kind of KINDS) {
      for (const count of [SMALL, LARGE]) {
        for (const variant of VARIANTS) {
          const r = await runVariant(variant, kind, kubeconfig, namespaces[`${kind}/${count}`], count);
          if (r.objects !== count)
            throw new Error(`${variant} ${kind}: cached ${r.objects}, expected ${count}`);
          const byVariant = (deltas[kind] ??= {});
          const byCount = (byVariant[variant] ??= {});
          (byCount[count] ??= []).push(r.heapAfter - r.heapBefore);
          console.error(
            `run ${run + 1} ${kind} ${count} ${variant}: +${Math.round((r.heapAfter - r.heapBefore) / 1024)} KiB heap`,
          );
        }
      }
    }
  }
  const perObject = {};
  for (const kind of KINDS) {
    perObject[kind] = {};
    for (const variant of VARIANTS) {
      const d = deltas[kind][variant];
      perObject[kind][variant] = (median(d[LARGE]) - median(d[SMALL])) / (LARGE - SMALL);
    }
  }
  const fmt = (n) => Math.round(n).toLocaleString("en-US");
  const ratio = (a, b) => (a / b).toFixed(2);
  console.log(`# ${RUNS} runs, slope between ${SMALL} and ${LARGE} objects, Node ${process.version}`);
  console.log("");
  console.log(
    "| object | JSON bytes (full / no managedFields) | Tessera | Tessera, managedFields stripped | Tessera, metadata only | Tessera, metadata only, stripped | client-node | client-node, managedFields stripped | client-node / Tessera | stripped: client-node / Tessera |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const kind of KINDS) {
    const p = perObject[kind];
    console.log(
      `| ${kind === "pods" ? "Pod" : "ConfigMap"} | ${fmt(sizes[kind].full)} / ${fmt(sizes[kind].stripped)} | ${fmt(p.tessera)} | ${fmt(p["tessera-stripped"])} | ${fmt(p["tessera-metadata"])} | ${fmt(p["tessera-metadata-stripped"])} | ${fmt(p["client-node"])} | ${fmt(p["client-node-stripped"])} | ${ratio(p["client-node"], p.tessera)} | ${ratio(p["client-node-stripped"], p["tessera-stripped"])} |`,
    );
  }
  console.log("");
  console.log(JSON.stringify({ runs: RUNS, small: SMALL, large: LARGE, sizes, perObject, deltas }));
  // Per run, the slope between the two sizes: the spread of the per-object figure.
  const slopes = (kind, variant) =>
    deltas[kind][variant][LARGE].map(
      (large, i) => (large - deltas[kind][variant][SMALL][i]) / (LARGE - SMALL),
    );
  writeResult({
    name: "informer-memory",
    title: "Informer cache: heap per cached object",
    unit: "bytes",
    lowerIsBetter: true,
    groups: KINDS.map((kind) => ({
      label: `${kind === "pods" ? "Pod" : "ConfigMap"} (${fmt(sizes[kind].full)} B of JSON)`,
      bars: VARIANTS.map((variant) => {
        const runs = slopes(kind, variant).map(Math.round);
        return {
          label: variant,
          median: Math.round(perObject[kind][variant]),
          min: Math.min(...runs),
          max: Math.max(...runs),
          runs,
        };
      }),
    })),
    note: `slope between ${SMALL} and ${LARGE} objects; median of ${RUNS} runs`,
  });
} finally {
  await cp.stop();
}
