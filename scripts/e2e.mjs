// The deploy path, run for real with podman (npm run e2e): the base image made
// locally (scripts/base-image.sh), an operator scaffolded by `tessera new`
// built from its own Dockerfile with `podman build --pull=never`, then run as
// a container against a test control plane (@tessera/testenv) the way the
// Deployment runs it: uid 1000, read-only root filesystem, on the in-cluster
// path (a service account's token, ca.crt and namespace mounted at
// /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST and
// _PORT set), the apiserver reached on the host network. It reconciles one
// object, then 1,000, and drains on `podman stop` (SIGTERM) with exit code 0.
// Then the sharded-tenants example, three containers sharing one ring. Prints
// image sizes, RSS and timings; exits 1 on the first failed check.
// Without podman it prints one line saying so and exits 0.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { rootCertificates } from "node:tls";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiClient, ConfigMaps, Namespaces, defineResource } from "@tessera/client";
import { ControlPlane, eventually, freePort, installCrds, writeServiceAccount } from "@tessera/testenv";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const keep = process.argv.includes("--keep");
// The runtime and rlimits this sandbox allows: its crun refuses the hybrid
// cgroup layout, and rlimits may not exceed the hard limit (20000 open files).
const runtime = ["--runtime", process.env.TESSERA_E2E_RUNTIME ?? "runc"];
const ulimits = (process.env.TESSERA_E2E_ULIMITS ?? "nofile=20000:20000,nproc=4096:4096")
  .split(",")
  .flatMap((u) => ["--ulimit", u]);

if (spawnSync("podman", ["--version"]).status !== 0) {
  console.log(
    "e2e: skipped: podman is not installed (apt-get install -y podman runc debootstrap; see README.md, Running the image end to end)",
  );
  process.exit(0);
}
if (!existsSync(join(root, "packages/cli/dist/src/bin.js"))) {
  console.error("e2e: the packages are not built: run `npm run build` first");
  process.exit(1);
}

/** Runs a command; throws with its output when it fails. */
function sh(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...options });
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${result.status}:\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}
const podman = (...args) => sh("podman", args).trim();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const mib = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;
const report = [];
const say = (line) => {
  console.log(`e2e: ${line}`);
  report.push(line);
};

/** VmRSS of the container's main process, in MiB, read from the host's /proc. */
function rss(container) {
  const pid = podman("inspect", "--format", "{{.State.Pid}}", container);
  const kib = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  return kib / 1024;
}

/**
 * An .npmrc for the build secret: the CA file the host's npm trusts (a
 * proxy's own CA, say) inline, since the build's containers do not see the
 * host's files; only the certificates Node does not already trust, since
 * npm hands `ca` to install scripts (esbuild's) as one environment variable,
 * and Linux refuses one over 128 KiB (E2BIG): a whole system bundle is more.
 * Undefined when the host's npm has no CA file of its own.
 */
function npmrcForBuild(dir) {
  const cafile = sh("npm", ["config", "get", "cafile"]).trim();
  const file =
    cafile && cafile !== "null" && cafile !== "undefined" ? cafile : process.env.NODE_EXTRA_CA_CERTS;
  if (!file || !existsSync(file)) return undefined;
  const unspaced = (pem) => pem.replace(/\s+/g, "");
  const trusted = new Set(rootCertificates.map(unspaced));
  const pems = (
    readFileSync(file, "utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  ).filter((pem) => !trusted.has(unspaced(pem)));
  const registry = sh("npm", ["config", "get", "registry"]).trim();
  const path = join(dir, "npmrc");
  writeFileSync(
    path,
    [`registry=${registry}`, ...pems.map((p) => `ca[]=${JSON.stringify(p)}`)].join("\n") + "\n",
    {
      mode: 0o600,
    },
  );
  return path;
}

function build(dir, tag, npmrc) {
  const started = Date.now();
  const secret = npmrc ? ["--secret", `id=npmrc,src=${npmrc}`] : [];
  sh(
    "podman",
    ["build", "--pull=never", "--network", "host", ...runtime, ...ulimits, ...secret, "-t", tag, dir],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const size = Number(podman("image", "inspect", "--format", "{{.Size}}", tag));
  say(`podman build ${tag}: ${seconds(started)}, image ${mib(size)}`);
  return size;
}

/** Starts the image as the Deployment would run it, on the in-cluster path; returns its health port. */
async function run(name, image, account, env) {
  spawnSync("podman", ["rm", "-f", name], { stdio: "ignore" });
  const health = await freePort();
  const metrics = await freePort();
  const vars = {
    ...account.env,
    TESSERA_HEALTH_BIND_ADDRESS: `127.0.0.1:${health}`,
    TESSERA_METRICS_BIND_ADDRESS: `127.0.0.1:${metrics}`,
    TESSERA_SHUTDOWN_DRAIN_TIMEOUT_MS: "30000",
    ...env,
  };
  podman(
    "run",
    "-d",
    "--name",
    name,
    ...runtime,
    ...ulimits,
    "--network",
    "host",
    "--user",
    "1000:1000",
    "--read-only",
    "-v",
    `${account.dir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`,
    ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
    image,
  );
  const started = Date.now();
  await eventually(
    `${name} answers /readyz`,
    async () => {
      await sleep(250);
      const state = podman("inspect", "--format", "{{.State.Status}}", name);
      if (state !== "running") throw new Error(`${name} is ${state}:\n${podman("logs", name)}`);
      return (await fetch(`http://127.0.0.1:${health}/readyz`).catch(() => undefined))?.ok === true;
    },
    60_000,
  );
  say(`${name}: ready ${seconds(started)} after podman run`);
  return health;
}

/** `podman stop` (SIGTERM, then SIGKILL after 45 s as the Pod's grace period): exit 0 after a drain. */
function stop(name) {
  const started = Date.now();
  podman("stop", "-t", "45", name);
  const code = podman("inspect", "--format", "{{.State.ExitCode}}", name);
  const logs = spawnSync("podman", ["logs", name], { encoding: "utf8" });
  const lines = `${logs.stdout}${logs.stderr}`;
  assert.equal(code, "0", `${name} exited ${code} on SIGTERM:\n${lines.slice(-4000)}`);
  assert.match(lines, /"msg":"manager: stopping".*received SIGTERM/, `${name} saw SIGTERM`);
  assert.match(lines, /"msg":"manager: stopped"/, `${name} finished its drain`);
  say(`${name}: podman stop, drained and exited 0 in ${seconds(started)}`);
}

async function createMany(client, resource, count, make) {
  for (let i = 0; i < count; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, count - i) }, (_, j) => client.create(resource, make(i + j))),
    );
  }
}

const work = mkdtempSync(join(tmpdir(), "tessera-e2e-"));
const cp = new ControlPlane();
const containers = [];
let failed = false;
try {
  const t0 = Date.now();
  const base = sh("bash", [join(root, "scripts/base-image.sh")], { stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop();
  say(`base image ${base}: ${mib(Number(podman("image", "inspect", "--format", "{{.Size}}", base)))}`);
  const npmrc = npmrcForBuild(work);

  // 1. A scaffolded operator, as `tessera new` writes it.
  const project = join(work, "shop-operator");
  sh(
    process.execPath,
    [
      join(root, "packages/cli/dist/src/bin.js"),
      "new",
      project,
      "--group",
      "shop.example.com",
      "--kind",
      "Order",
      "--yes",
    ],
    { cwd: work, env: { ...process.env, CI: "1" } },
  );
  const shopSize = build(project, "localhost/shop-operator:dev", npmrc);

  await cp.start();
  const kubeconfig = cp.writeKubeconfig(join(work, "kubeconfig"));
  chmodSync(work, 0o755); // the service account's files below are read by uid 1000 in the container
  const account = await writeServiceAccount(cp, join(work, "serviceaccount"));
  const client = new ApiClient(cp.kubeConfig, { fieldManager: "e2e" });
  await installCrds(cp, join(project, "deploy/base/crds"));
  await client.create(Namespaces, { metadata: { name: "shop" } });
  const Orders = defineResource({
    group: "shop.example.com",
    version: "v1alpha1",
    kind: "Order",
    plural: "orders",
    scope: "Namespaced",
  });

  containers.push("e2e-shop-operator");
  await run("e2e-shop-operator", "localhost/shop-operator:dev", account, {
    TESSERA_NAMESPACE: "shop",
    TESSERA_IDENTITY: "e2e-shop-operator",
  });
  let started = Date.now();
  await client.create(Orders, {
    metadata: { name: "first", namespace: "shop" },
    spec: { data: { hello: "world" } },
  });
  await eventually("the container reconciles an Order into its ConfigMap", async () => {
    const cm = await client.get(ConfigMaps, { name: "first", namespace: "shop" });
    return cm?.data?.["hello"] === "world";
  });
  say(`one Order reconciled by the container in ${seconds(started)}`);
  await sleep(10_000);
  const idle = rss("e2e-shop-operator");
  say(`shop-operator RSS at idle (one Order): ${idle.toFixed(0)} MiB`);

  started = Date.now();
  await createMany(client, Orders, 1000, (i) => ({
    metadata: { name: `order-${i}`, namespace: "shop" },
    spec: { data: { n: String(i) } },
  }));
  await eventually(
    "the container reconciles 1,000 Orders",
    async () => {
      await sleep(1000);
      const owned = await client.list(ConfigMaps, { namespace: "shop" });
      return owned.filter((c) => c.metadata?.name?.startsWith("order-")).length === 1000;
    },
    300_000,
  );
  say(`1,000 Orders created and reconciled in ${seconds(started)}`);
  await sleep(10_000);
  const loaded = rss("e2e-shop-operator");
  say(`shop-operator RSS with 1,001 Orders (and their ConfigMaps) cached: ${loaded.toFixed(0)} MiB`);
  stop("e2e-shop-operator");

  // 2. The sharded-tenants example, three containers sharing one ring.
  const tenants = join(work, "sharded-tenants");
  cpSync(join(root, "examples/sharded-tenants"), tenants, {
    recursive: true,
    filter: (src) => !/\/(node_modules|dist)$/.test(src),
  });
  vendorTessera(tenants, join(project, "vendor/tessera"));
  const tenantsSize = build(tenants, "localhost/sharded-tenants:dev", npmrc);
  await installCrds(cp, join(tenants, "deploy/base/crds"));
  await client.create(Namespaces, { metadata: { name: "tenants" } });
  const Tenants = defineResource({
    group: "tenancy.example.com",
    version: "v1alpha1",
    kind: "Tenant",
    plural: "tenants",
    scope: "Namespaced",
  });
  const members = ["tenants-0", "tenants-1", "tenants-2"];
  for (const name of members) {
    containers.push(name);
    await run(name, "localhost/sharded-tenants:dev", account, {
      TESSERA_NAMESPACE: "tenants",
      TESSERA_IDENTITY: name,
    });
  }
  started = Date.now();
  await createMany(client, Tenants, 300, (i) => ({
    metadata: { name: `team-${i}`, namespace: "tenants" },
    spec: { displayName: `Team ${i}` },
  }));
  const allReady = async (count) => {
    await sleep(1000);
    const ready = (await client.list(Tenants, { namespace: "tenants" })).filter((t) =>
      t.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
    return ready.length === count;
  };
  await eventually("three containers reconcile 300 Tenants", () => allReady(300), 180_000);
  say(`300 Tenants reconciled by three containers in ${seconds(started)}`);
  const shards = sh(process.execPath, [
    join(root, "packages/cli/dist/src/bin.js"),
    "shards",
    "-n",
    "tenants",
    "--kubeconfig",
    kubeconfig,
    "--json",
  ]);
  const rings = JSON.parse(shards);
  const ringMembers = JSON.stringify(rings).match(/tenants-\d/g) ?? [];
  for (const name of members)
    assert.ok(ringMembers.includes(name), `${name} is a member of the ring:\n${shards}`);
  say(`tessera shards: the ring holds ${[...new Set(ringMembers)].sort().join(", ")}`);
  for (const name of members) say(`${name} RSS with 300 Tenants in the ring: ${rss(name).toFixed(0)} MiB`);

  // One leaves: the two others take its slots over, and new Tenants are still served.
  stop("tenants-2");
  started = Date.now();
  await createMany(client, Tenants, 30, (i) => ({
    metadata: { name: `late-${i}`, namespace: "tenants" },
    spec: { displayName: `Late ${i}` },
  }));
  await eventually("two containers reconcile 30 more Tenants", () => allReady(330), 120_000);
  say(`after tenants-2 stopped, 30 new Tenants reconciled by the other two in ${seconds(started)}`);
  stop("tenants-1");
  stop("tenants-0");
  say(
    `shop-operator image ${mib(shopSize)}, sharded-tenants image ${mib(tenantsSize)}; whole run ${seconds(t0)}`,
  );
} catch (error) {
  failed = true;
  console.error(`e2e: FAILED: ${error instanceof Error ? error.stack : String(error)}`);
  for (const name of containers) {
    const logs = spawnSync("podman", ["logs", "--tail", "30", name], { encoding: "utf8" });
    console.error(`--- last log lines of ${name}:\n${logs.stdout}${logs.stderr}`);
  }
} finally {
  for (const name of containers) spawnSync("podman", ["rm", "-f", "-t", "0", name], { stdio: "ignore" });
  await cp.stop();
  if (!keep) rmSync(work, { recursive: true, force: true });
  else console.log(`e2e: kept ${work}`);
}
console.log(`\ne2e summary:\n  ${report.join("\n  ")}`);
console.log(failed ? "0 passed, 1 failed" : "1 passed, 0 failed");
process.exit(failed ? 1 : 0);

/**
 * An example of this repository installs @tessera from the workspace; outside
 * it, as an image build sees it, the packages come from tarballs packed from
 * this checkout into vendor/tessera/, as `tessera new` does for a project:
 * the scaffolded project's own tarballs, copied.
 */
function vendorTessera(dir, tarballs) {
  const dest = join(dir, "vendor/tessera");
  mkdirSync(dest, { recursive: true });
  const files = {};
  for (const file of readdirSync(tarballs)) {
    const name = /^tessera-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(file)?.[1];
    if (!name) continue;
    copyFileSync(join(tarballs, file), join(dest, file));
    files[`@tessera/${name}`] = `file:vendor/tessera/${file}`;
  }
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  for (const field of ["dependencies", "devDependencies"]) {
    for (const name of Object.keys(pkg[field] ?? {})) if (files[name]) pkg[field][name] = files[name];
  }
  pkg.overrides = Object.fromEntries(
    Object.entries(files).filter(([name]) => !pkg.dependencies?.[name] && !pkg.devDependencies?.[name]),
  );
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  sh("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir });
}
