// The demo (scripts/demo.sh runs it after a build): a control plane, the
// Widget CRD, three replicas of the example operator in sharded mode, 30
// Widgets. Each Widget must get its ConfigMap; then a replica is stopped
// with SIGTERM, every Widget changes, and the two left must reconcile all of
// it. Prints what happened and exits non-zero if anything was not reconciled.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ControlPlane, eventually } from "@tessera/testenv";

const OPERATOR = fileURLToPath(
  new URL("../packages/runtime/dist/examples/widget-operator.js", import.meta.url),
);
const WIDGETS = 30;
const json = { "Content-Type": "application/json" };
const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: { data: { type: "object", additionalProperties: { type: "string" } } },
              },
            },
          },
        },
      },
    ],
  },
};

const cp = new ControlPlane();
const replicas = [];
const say = (line) => console.log(`demo: ${line}`);
try {
  say("starting etcd and kube-apiserver");
  await cp.start();
  const call = async (method, path, body) => {
    const res = await cp.raw(path, {
      method,
      headers: json,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300)
      throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body);
  };
  await call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  await eventually(
    "the Widget CRD is served",
    async () => (await cp.raw("/apis/example.com/v1/widgets")).status === 200,
  );
  const kubeconfig = cp.writeKubeconfig();
  for (const name of ["replica-a", "replica-b", "replica-c"]) {
    const child = spawn(process.execPath, [OPERATOR], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: kubeconfig,
        TESSERA_IDENTITY: name,
        TESSERA_NAMESPACE: "default",
        TESSERA_LOG_LEVEL: "warn",
        TESSERA_HEALTH_BIND_ADDRESS: "0",
        TESSERA_METRICS_BIND_ADDRESS: "0",
        TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "3000",
        TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "2000",
        TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "500",
      },
      stdio: ["ignore", "inherit", "inherit"],
    });
    replicas.push({
      name,
      child,
      exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))),
    });
  }
  say("3 replicas of the example operator started (sharded mode)");
  const names = Array.from({ length: WIDGETS }, (_, i) => `widget-${i}`);
  for (const name of names) {
    await call("POST", "/apis/example.com/v1/namespaces/default/widgets", {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name },
      spec: { data: { round: "1" } },
    });
  }
  const configMapsAt = async (round) => {
    const list = await call("GET", "/api/v1/namespaces/default/configmaps");
    return list.items.filter((cm) => names.includes(cm.metadata.name) && cm.data?.round === round).length;
  };
  let started = Date.now();
  await eventually(`${WIDGETS} ConfigMaps`, async () => (await configMapsAt("1")) === WIDGETS, 60_000);
  say(`${WIDGETS} Widgets created; all ${WIDGETS} owned ConfigMaps applied in ${Date.now() - started} ms`);

  const leaving = replicas.shift();
  leaving.child.kill("SIGTERM");
  say(`${leaving.name} stopped with SIGTERM: exit code ${await leaving.exited}`);
  started = Date.now();
  const patch = (name) =>
    cp.raw(`/apis/example.com/v1/namespaces/default/widgets/${name}`, {
      method: "PATCH",
      headers: { "Content-Type": "application/merge-patch+json" },
      body: JSON.stringify({ spec: { data: { round: "2" } } }),
    });
  await Promise.all(names.map(patch));
  await eventually(
    `${WIDGETS} ConfigMaps at round 2`,
    async () => (await configMapsAt("2")) === WIDGETS,
    60_000,
  );
  say(`every Widget changed; the 2 replicas left reconciled all ${WIDGETS} in ${Date.now() - started} ms`);
  say("done");
} finally {
  for (const r of replicas) r.child.kill("SIGTERM");
  await Promise.all(replicas.map((r) => r.exited));
  await cp.stop();
}
