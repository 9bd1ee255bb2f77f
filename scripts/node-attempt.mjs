// A real node for the test control plane, run by hand (root, Linux): kubelet
// built from the Go module proxy at the control plane's version, containerd
// and runc from Debian's packages (apt-get install -y containerd runc), a
// static pause image made here (no registry), and a binder standing in for
// kube-scheduler. Prints the kubeconfig to use with kubectl, then runs until
// Ctrl-C, when it stops the kubelet, the containers, containerd and the
// control plane. What each setting is for, and what it let run:
// docs/how-to/deploying.md, "A node here". Not part of the tests.
//
//   bash scripts/with-node.sh node scripts/node-attempt.mjs
//   # in another shell: load an image, then kubectl apply -k an overlay
//   podman save docker.io/library/shop-operator:dev -o op.tar
//   ctr -a /run/tessera-node/containerd.sock -n k8s.io images import op.tar
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient, defineResource } from "@tessera/client";
import { ControlPlane, defaultControllers, freePort } from "@tessera/testenv";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tools = join(root, "packages/testenv/tools/controlplane");
const version = readFileSync(join(tools, "KUBE_VERSION"), "utf8").trim();
const dir = join(process.env.TESSERA_CACHE_DIR ?? join(homedir(), ".cache/tessera"), `kubelet-${version}`);
const state = "/run/tessera-node";
const socket = `${state}/containerd.sock`;
mkdirSync(dir, { recursive: true });
mkdirSync(state, { recursive: true });

function sh(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...options });
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")} exited ${result.status}:\n${result.stderr}`);
  return result.stdout;
}

// 1. kubelet, built once.
const kubeletBin = join(dir, "kubelet");
if (!existsSync(kubeletBin)) {
  console.log(`node-attempt: building kubelet ${version} (first time only; several minutes)`);
  const minor = version.replace(/^v1\./, "").split(".")[0];
  sh(
    "go",
    [
      "build",
      "-ldflags",
      `-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}`,
      "-o",
      kubeletBin,
      "k8s.io/kubernetes/cmd/kubelet",
    ],
    {
      cwd: join(tools, "kubelet"),
      env: { ...process.env, GOFLAGS: "-mod=mod -trimpath", GOTOOLCHAIN: "local", CGO_ENABLED: "0" },
    },
  );
}

// 2. containerd with its state of its own, and runc. The sandbox this was
// tried in refuses a negative oom_score_adj, which the kubelet gives every
// Pod sandbox (-998): restrict_oom_score_adj clamps it to containerd's own.
const config = sh("containerd", ["config", "default"])
  .replace('root = "/var/lib/containerd"', 'root = "/var/lib/tessera-node/containerd"')
  .replace('state = "/run/containerd"', `state = "${state}/containerd"`)
  .replace('address = "/run/containerd/containerd.sock"', `address = "${socket}"`)
  .replace("restrict_oom_score_adj = false", "restrict_oom_score_adj = true");
writeFileSync(join(dir, "containerd.toml"), config);
const containerd = spawn("containerd", ["--config", join(dir, "containerd.toml")], {
  stdio: ["ignore", "ignore", openSync(join(dir, "containerd.log"), "w")],
});
const ctr = (...args) => sh("ctr", ["-a", socket, "-n", "k8s.io", ...args]);
for (let i = 0; i < 50 && spawnSync("ctr", ["-a", socket, "version"]).status !== 0; i++) {
  await new Promise((resolve) => setTimeout(resolve, 200));
}

// 3. The pause image, made here: there is no registry to pull it from.
if (!ctr("images", "ls", "-q").includes("registry.k8s.io/pause:3.6")) {
  writeFileSync(
    join(dir, "pause.c"),
    "#include <signal.h>\n#include <unistd.h>\nstatic void down(int s) { (void)s; _exit(0); }\n" +
      "int main(void) { signal(SIGINT, down); signal(SIGTERM, down); for (;;) pause(); }\n",
  );
  mkdirSync(join(dir, "pause-root"), { recursive: true });
  sh("gcc", ["-static", "-Os", "-o", join(dir, "pause-root/pause"), join(dir, "pause.c")]);
  sh("tar", ["-C", join(dir, "pause-root"), "-cf", join(dir, "pause-rootfs.tar"), "pause"]);
  sh("podman", [
    "import",
    "--quiet",
    "--change",
    'ENTRYPOINT ["/pause"]',
    join(dir, "pause-rootfs.tar"),
    "registry.k8s.io/pause:3.6",
  ]);
  sh("podman", ["save", "registry.k8s.io/pause:3.6", "-o", join(dir, "pause-image.tar")]);
  ctr("images", "import", join(dir, "pause-image.tar"));
}

// 4. The control plane, with kube-controller-manager (Deployments down to
// Pods, ServiceAccount tokens, the kube-root-ca.crt ConfigMap).
const cp = new ControlPlane({
  controllerManager: { controllers: [...defaultControllers, "root-ca-certificate-publisher-controller"] },
});
await cp.start();
const kubeconfig = cp.writeKubeconfig(join(dir, "kubeconfig"));

// 5. The kubelet. cgroup v1 here: failCgroupV1 false lets it start (with a warning).
const port = await freePort();
writeFileSync(
  join(dir, "kubelet.yaml"),
  `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${socket}
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
authorization: { mode: AlwaysAllow }
address: 127.0.0.1
port: ${port}
readOnlyPort: 0
healthzPort: 0
failSwapOn: false
localStorageCapacityIsolation: false
enforceNodeAllocatable: []
evictionHard: { "nodefs.available": "1%", "imagefs.available": "1%", "memory.available": "100Mi" }
resolvConf: /etc/resolv.conf
`,
);
const kubelet = spawn(
  kubeletBin,
  [
    `--config=${join(dir, "kubelet.yaml")}`,
    `--kubeconfig=${kubeconfig}`,
    "--hostname-override=tessera-node",
    "--root-dir=/var/lib/tessera-node/kubelet",
    `--cert-dir=${join(dir, "kubelet-pki")}`,
    "--v=2",
  ],
  { stdio: ["ignore", "ignore", openSync(join(dir, "kubelet.log"), "w")] },
);
kubelet.on("exit", (code, signal) =>
  console.log(`node-attempt: kubelet exited (${signal ?? code}); see ${dir}/kubelet.log`),
);

// 6. Instead of kube-scheduler: every Pod without a node is bound to this one.
const client = new ApiClient(cp.kubeConfig, { fieldManager: "node-attempt" });
const Pods = defineResource({ group: "", version: "v1", kind: "Pod", plural: "pods", scope: "Namespaced" });
const binder = setInterval(() => {
  void client
    .list(Pods)
    .then(async (pods) => {
      for (const pod of pods.filter((p) => !p.spec?.nodeName)) {
        const { name, namespace } = pod.metadata;
        await cp.raw(`/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "v1",
            kind: "Binding",
            metadata: { name },
            target: { apiVersion: "v1", kind: "Node", name: "tessera-node" },
          }),
        });
        console.log(`node-attempt: bound ${namespace}/${name} to tessera-node`);
      }
    })
    .catch((error) => console.log(`node-attempt: binder: ${error.message}`));
}, 1000);

console.log(`node-attempt: control plane and node up; export KUBECONFIG=${kubeconfig}`);
const server = JSON.parse(readFileSync(kubeconfig, "utf8")).clusters[0].cluster.server;
// A Pod on the host network reaches the apiserver here, with its in-cluster configuration.
console.log(
  `node-attempt: the apiserver is ${server}: set KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT to it in a hostNetwork Pod; Ctrl-C stops all`,
);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  clearInterval(binder);
  kubelet.kill("SIGTERM");
  // The kubelet leaves its containers to containerd: remove them before it goes.
  for (const task of ctr("task", "ls", "-q").split("\n").filter(Boolean)) {
    spawnSync("ctr", ["-a", socket, "-n", "k8s.io", "task", "kill", "-s", "SIGKILL", task]);
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  for (const task of ctr("task", "ls", "-q").split("\n").filter(Boolean)) {
    spawnSync("ctr", ["-a", socket, "-n", "k8s.io", "task", "rm", "-f", task]);
  }
  for (const c of ctr("containers", "ls", "-q").split("\n").filter(Boolean)) {
    spawnSync("ctr", ["-a", socket, "-n", "k8s.io", "containers", "rm", c]);
  }
  containerd.kill("SIGTERM");
  const mounts = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1])
    .filter((m) => m?.startsWith("/var/lib/tessera-node/") || m?.startsWith(`${state}/`))
    .reverse();
  for (const m of mounts) spawnSync("umount", [m]);
  await cp.stop();
  process.exit(0);
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
