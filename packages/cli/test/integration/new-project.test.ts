// The CLI as a user runs it: `tessera new` into an empty directory (the
// @tessera packages packed from this checkout, no workspace links), then the
// generated project's own `npm test` against a real control plane, then
// `tessera create api` and `tessera generate`, and the bad inputs.
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { ConfigMaps, defineResource, type KubeObject, loadKubeConfig } from "@tessera/client";
import { ApiClient } from "@tessera/runtime";
import { eventually, useControlPlane, type ControlPlane } from "@tessera/testenv";
import { PNPM_VERSION, type RingJson } from "../../src/index.js";
import { importedPackages } from "../../src/project-dependencies.js";

const bin = join(dirname(fileURLToPath(import.meta.url)), "../../src/bin.js");

interface Run {
  status: number | null;
  out: string;
}

function run(cmd: string, args: string[], cwd: string): Run {
  const result = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "1" } });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}
const tessera = (args: string[], cwd: string) => run(process.execPath, [bin, ...args], cwd);
const npm = (args: string[], cwd: string) => run("npm", args, cwd);

/**
 * Every package the project's src/ imports is in its dependencies, and every
 * one test/ imports in dependencies or devDependencies: what pnpm's strict
 * layout needs to find them.
 */
function assertDeclaresImports(dir: string): void {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const files = listFiles(dir).filter((f) => /^(src|test)\/.*\.ts$/.test(f));
  assert.ok(
    files.some((f) => f.startsWith("src/generated/")),
    "generated code is among the files checked",
  );
  for (const file of files) {
    for (const name of importedPackages(readFileSync(join(dir, file), "utf8"))) {
      const declared = file.startsWith("src/")
        ? pkg.dependencies?.[name]
        : (pkg.dependencies?.[name] ?? pkg.devDependencies?.[name]);
      assert.ok(declared, `${file} imports ${name}, which package.json does not declare`);
    }
  }
}

function listFiles(dir: string, under = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (["node_modules", "dist", "vendor"].includes(name)) return [];
    return statSync(path).isDirectory() ? listFiles(path, under) : [relative(under, path)];
  });
}

describe("tessera new, as a user runs it", function () {
  this.timeout(600_000);
  const root = mkdtempSync(join(tmpdir(), "tessera-cli-"));
  const project = join(root, "shop-operator");
  const sharded = join(root, "sharded-operator");
  after(() => rmSync(root, { recursive: true, force: true }));

  it("scaffolds a project whose own npm test passes against the real control plane", () => {
    const started = Date.now();
    const created = tessera(
      ["new", project, "--group", "shop.example.com", "--kind", "Order", "--helm", "--yes"],
      root,
    );
    assert.equal(created.status, 0, created.out);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      overrides: Record<string, string>;
    };
    // Installed from tarballs packed from this checkout, not linked.
    assert.match(pkg.dependencies["@tessera/runtime"]!, /^file:vendor\/tessera\/tessera-runtime-\d.*\.tgz$/);
    assert.match(pkg.overrides["@tessera/sharding"]!, /^file:vendor\/tessera\//);
    assert.ok(!statSync(join(project, "node_modules/@tessera/runtime")).isSymbolicLink());
    assertDeclaresImports(project);
    const test = npm(["test"], project);
    assert.equal(test.status, 0, test.out);
    // Per kind: 4 cases on the control plane, 4 of reconcileOnce and 2 of the test manager on the fake client.
    assert.match(test.out, /10 passing/);
    assert.match(test.out, /OrderReconciler, one reconcile on the fake client/);
    assert.match(test.out, /OrderReconciler, in the test manager/);
    // The unit file alone, as an author runs it in the inner loop (mocha's own time for its cases).
    const unit = run("npx", ["mocha", "--no-config", "dist/test/order.unit.test.js"], project);
    assert.equal(unit.status, 0, unit.out);
    const unitTime = /6 passing \((\d+m?s)\)/.exec(unit.out);
    assert.ok(unitTime, unit.out);
    const planeTime = /passing \((\d+m?s)\)/.exec(test.out)?.[1];
    console.log(
      `      the unit file: 6 cases in ${unitTime[1]}; npm test (with the control plane): ${planeTime}`,
    );
    const files = listFiles(project).sort();
    const lines = files.map((f) => `${f} (${readFileSync(join(project, f), "utf8").split("\n").length - 1})`);
    console.log(
      `      tessera new to a passing npm test: ${((Date.now() - started) / 1000).toFixed(1)} s; ${files.length} files:\n        ${lines.join("\n        ")}`,
    );
    for (const expected of [
      "schemas/order.schema.json",
      "src/controllers/order.ts",
      "src/controllers/index.ts",
      "src/generated/order.ts",
      "src/generated/order.validator.ts",
      "src/main.ts",
      "test/order.test.ts",
      "test/order.unit.test.ts",
      "deploy/base/crds/orders.shop.example.com.yaml",
      "deploy/base/rbac.yaml",
      "deploy/base/deployment.yaml",
      "deploy/overlays/dev/kustomization.yaml",
      "Dockerfile",
      ".gitignore",
      "tessera.json",
    ]) {
      assert.ok(files.includes(expected), `${expected} is generated; got ${files.join(", ")}`);
    }
  });

  it("adds a kind with create api, touching no file it did not create but the list of reconcilers, and npm test passes again", () => {
    const before = new Map(
      listFiles(project)
        // What generate owns is rewritten; everything else must stay as it was.
        .filter(
          (f) =>
            !f.startsWith("src/generated/") &&
            f !== "src/controllers/index.ts" &&
            !f.startsWith("deploy/base/crds/") &&
            f !== "deploy/base/rbac.yaml" &&
            !f.startsWith("chart/crds/") &&
            f !== "chart/templates/rbac.yaml",
        )
        .map((f) => [f, readFileSync(join(project, f), "utf8")]),
    );
    const added = tessera(["create", "api", "Payment"], project);
    assert.equal(added.status, 0, added.out);
    for (const [file, content] of before)
      assert.equal(readFileSync(join(project, file), "utf8"), content, file);
    const list = readFileSync(join(project, "src/controllers/index.ts"), "utf8");
    assert.match(list, /import \{ PaymentReconciler \} from "\.\/payment\.js";/);
    assert.match(list, /export const reconcilers = \[OrderReconciler, PaymentReconciler\] as const;/);
    assert.ok(existsSync(join(project, "deploy/base/crds/payments.shop.example.com.yaml")));
    const rbac = readFileSync(join(project, "deploy/base/rbac.yaml"), "utf8");
    assert.match(rbac, /- payments\/status/);
    assert.ok(existsSync(join(project, "test/payment.unit.test.ts")));
    const test = npm(["test"], project);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /20 passing/);
  });

  it("tessera dev runs it against a local control plane, and rebuilds and restarts it on a change", async () => {
    const dev = spawn(process.execPath, [bin, "dev"], { cwd: project, env: { ...process.env, CI: "1" } });
    let output = "";
    dev.stdout.on("data", (c: Buffer) => (output += c.toString()));
    dev.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => dev.on("exit", (code) => resolve(code)));
    const starts = () => output.split("starting the operator").length - 1;
    try {
      await eventually("dev is watching", () => output.includes("watching src/ and schemas/"), 120_000);
      const client = new ApiClient(await loadKubeConfig({ file: join(project, ".tessera/kubeconfig") }), {
        fieldManager: "test",
      });
      const Orders = defineResource<KubeObject>({
        group: "shop.example.com",
        version: "v1alpha1",
        kind: "Order",
        plural: "orders",
        scope: "Namespaced",
      });
      const reconciled = async (name: string) => {
        await client.create(Orders, {
          metadata: { name, namespace: "default" },
          spec: { data: { a: "1" } },
        } as KubeObject);
        await eventually(`${name}'s ConfigMap (dev said: ${output.slice(-1500)})`, async () => {
          return (await client.get(ConfigMaps, { name, namespace: "default" })) !== undefined;
        });
      };
      await reconciled("before-change");
      assert.match(output, /INFO {2}\S.*logger=shop-operator/, "logs are pretty-printed");
      const source = join(project, "src/controllers/order.ts");
      writeFileSync(source, readFileSync(source, "utf8") + "\n// changed while tessera dev runs\n");
      await eventually("dev restarted the operator", () => starts() === 2, 60_000);
      assert.match(output, /src\/controllers\/order\.ts changed; rebuilding/);
      await reconciled("after-change");
    } finally {
      dev.kill("SIGINT");
      assert.equal(await exited, 0, output.slice(-2000));
    }
    assert.match(output, /stopping the local control plane/);
  });

  it("generate is idempotent, and --check fails after a schema edit until generate runs", () => {
    const again = tessera(["generate"], project);
    assert.equal(again.status, 0, again.out);
    assert.match(again.out, /0 written/);
    assert.equal(tessera(["generate", "--check"], project).status, 0);

    const file = join(project, "schemas/payment.schema.json");
    const schema = JSON.parse(readFileSync(file, "utf8")) as {
      properties: { spec: { properties: Record<string, unknown> } };
    };
    schema.properties.spec.properties["amount"] = { type: "integer", minimum: 0 };
    writeFileSync(file, JSON.stringify(schema, null, 2));
    const stale = tessera(["generate", "--check"], project);
    assert.equal(stale.status, 1, stale.out);
    assert.match(
      stale.out,
      /stale[\s\S]*deploy\/base\/crds\/payments\.shop\.example\.com\.yaml[\s\S]*src\/generated\/payment\.ts/,
    );
    assert.equal(tessera(["generate"], project).status, 0);
    assert.equal(tessera(["generate", "--check"], project).status, 0);
  });

  it("refuses bad input with the rule it breaks and writes nothing", () => {
    const nonEmpty = tessera(["new", project, "--yes", "--no-install"], root);
    assert.equal(nonEmpty.status, 2);
    assert.match(nonEmpty.out, /is not empty; .*--force/);

    const fresh = join(root, "fresh");
    const badKind = tessera(["new", fresh, "--kind", "order", "--yes", "--no-install"], root);
    assert.equal(badKind.status, 2);
    assert.match(badKind.out, /invalid kind "order": a kind is UpperCamelCase/);
    const badGroup = tessera(["new", fresh, "--group", "shop", "--yes", "--no-install"], root);
    assert.equal(badGroup.status, 2);
    assert.match(badGroup.out, /invalid group "shop": .*at least one dot/);
    assert.ok(!existsSync(fresh), "nothing was written");

    const file = join(project, "schemas/payment.schema.json");
    const schema = JSON.parse(readFileSync(file, "utf8")) as {
      properties: { spec: { properties: Record<string, Record<string, unknown>> } };
    };
    delete schema.properties.spec.properties["amount"]!["type"];
    writeFileSync(file, JSON.stringify(schema, null, 2));
    const notStructural = tessera(["generate"], project);
    assert.equal(notStructural.status, 2);
    assert.match(notStructural.out, /not structural[\s\S]*\.properties\.spec\.properties\.amount: no type/);
  });

  /**
   * The generated RBAC of the project in `dir` (named as its directory, in the
   * namespace of the same name), as the operator's own ServiceAccount: enough
   * to reconcile every kind, and no rule to spare.
   */
  function rbacSuite(title: string, dir: string, group: string, kinds: { kind: string; plural: string }[]) {
    describe(title, function () {
      // OwnerReferencesPermissionEnforcement makes the finalizers rule count, as
      // it does on clusters that enable it (OpenShift among them).
      const env = useControlPlane({
        apiserverFlags: ["--enable-admission-plugins=OwnerReferencesPermissionEnforcement"],
        crds: [join(dir, "deploy/base/crds")],
      });
      const namespace = basename(dir);
      let kubeconfig: string;
      let roles: { kind: "ClusterRole" | "Role"; doc: RoleDoc }[];
      let round = 0;

      before(async () => {
        // The operator runs as its image runs it: bundled by `npm run bundle` (an entry module and its chunks).
        const bundled = npm(["run", "bundle"], dir);
        assert.equal(bundled.status, 0, bundled.out);
        assert.match(bundled.out, /bundled into dist\/main\.mjs \(\d+\.\d MiB\)/);
        await admin(env.cp, "POST", "/api/v1/namespaces", { metadata: { name: namespace } });
        await admin(env.cp, "POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
          metadata: { name: namespace },
        });
        const docs = parseAllDocuments(readFileSync(join(dir, "deploy/base/rbac.yaml"), "utf8")).map(
          (d) => d.toJS() as RoleDoc,
        );
        for (const doc of docs) await applyRbac(env.cp, doc);
        roles = docs
          .filter((d) => d.kind === "ClusterRole" || d.kind === "Role")
          .map((doc) => ({ kind: doc.kind as "ClusterRole" | "Role", doc }));
        const token = (await admin(
          env.cp,
          "POST",
          `/api/v1/namespaces/${namespace}/serviceaccounts/${namespace}/token`,
          { spec: { expirationSeconds: 3600 } },
        )) as { status: { token: string } };
        kubeconfig = join(root, `${namespace}.kubeconfig`);
        writeFileSync(
          kubeconfig,
          JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [
              {
                name: "c",
                cluster: { server: env.cp.apiserverUrl, "certificate-authority-data": b64(env.cp.caPem) },
              },
            ],
            users: [{ name: "sa", user: { token: token.status.token } }],
            contexts: [{ name: "c", context: { cluster: "c", user: "sa" } }],
            "current-context": "c",
          }),
        );
      });

      /** Starts the bundled operator as the ServiceAccount; its output is collected. */
      function startOperator() {
        const child = spawn(process.execPath, ["dist/main.mjs"], {
          cwd: dir,
          env: {
            ...process.env,
            KUBECONFIG: kubeconfig,
            TESSERA_NAMESPACE: namespace,
            TESSERA_IDENTITY: `replica-${round}`,
            TESSERA_HEALTH_BIND_ADDRESS: "0",
            TESSERA_METRICS_BIND_ADDRESS: "0",
            TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "500",
          },
        });
        const output: string[] = [];
        child.stdout.on("data", (c: Buffer) => output.push(c.toString()));
        child.stderr.on("data", (c: Buffer) => output.push(c.toString()));
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
        return {
          output: () => output.join(""),
          stop: async () => {
            child.kill("SIGTERM");
            return exited;
          },
        };
      }

      async function createObjects(): Promise<string> {
        const name = `r${++round}`;
        for (const { kind, plural } of kinds) {
          await admin(env.cp, "POST", `/apis/${group}/v1alpha1/namespaces/default/${plural}`, {
            apiVersion: `${group}/v1alpha1`,
            kind,
            metadata: { name },
            spec: { data: { k: "v" } },
          });
        }
        return name;
      }

      it("is enough: the operator reconciles every kind and records events", async () => {
        const operator = startOperator();
        try {
          const name = await createObjects();
          for (const { plural } of kinds) {
            await eventually(
              `${plural}/${name} is Ready (operator said: ${operator.output().slice(-2000)})`,
              async () => {
                const o = (await admin(
                  env.cp,
                  "GET",
                  `/apis/${group}/v1alpha1/namespaces/default/${plural}/${name}`,
                )) as {
                  status?: { conditions?: { type: string; status: string }[] };
                };
                return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
              },
              30_000,
            );
          }
          await eventually("a ConfigMapApplied event per kind", async () => {
            const events = (await admin(
              env.cp,
              "GET",
              "/apis/events.k8s.io/v1/namespaces/default/events",
            )) as {
              items: { reason: string }[];
            };
            return events.items.filter((e) => e.reason === "ConfigMapApplied").length >= kinds.length;
          });
          assert.doesNotMatch(operator.output(), /forbidden/i);
        } finally {
          assert.equal(await operator.stop(), 0, operator.output().slice(-2000));
        }
      });

      it("is no more: without any one rule the operator fails, naming the missing permission", async function () {
        for (const { kind, doc } of roles) {
          for (let i = 0; i < doc.rules.length; i++) {
            const rule = doc.rules[i]!;
            const label = `${kind} rule ${rule.apiGroups[0] || "core"} ${rule.resources.join(",")} [${rule.verbs.join(",")}]`;
            await applyRbac(env.cp, { ...doc, rules: doc.rules.filter((_, j) => j !== i) });
            const operator = startOperator();
            try {
              await createObjects();
              const resources = rule.resources
                .map((r) => r.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
                .join("|");
              // The server names verb and resource ("cannot patch resource \"orders/status\""); the
              // owner-reference admission plugin says which permission instead of naming it.
              const named = rule.resources.every((r) => r.endsWith("/finalizers"))
                ? /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on/
                : new RegExp(`cannot \\w+ resource \\\\?"(${resources})\\\\?"`);
              await eventually(
                `without the ${label}, an error naming it`,
                () => named.test(operator.output()),
                30_000,
              );
              console.log(`      without the ${label}: ${named.exec(operator.output())![0]}`);
            } finally {
              await operator.stop();
              await applyRbac(env.cp, doc);
            }
          }
        }
      });
    });
  }

  it("scaffolds a sharded project with a Helm chart, whose own npm test runs the ring", () => {
    const made = tessera(["new", sharded, "--sharded", "--helm", "--kind", "Shard", "--yes"], root);
    assert.equal(made.status, 0, made.out);
    assert.ok(existsSync(join(sharded, "chart/templates/horizontal-pod-autoscaler.yaml")));
    assert.ok(existsSync(join(sharded, "deploy/base/horizontal-pod-autoscaler.yaml")));
    // The mode is set in one place, the reconciler's declaration, which the test registers as main.ts does.
    assert.match(readFileSync(join(sharded, "src/controllers/shard.ts"), "utf8"), /\.mode\("sharded"\)/);
    for (const file of [
      "src/main.ts",
      "test/shard.test.ts",
      "deploy/base/deployment.yaml",
      "chart/templates/deployment.yaml",
      "chart/values.yaml",
    ]) {
      assert.doesNotMatch(readFileSync(join(sharded, file), "utf8"), /\bmode: |TESSERA_MODE/, file);
    }
    const test = npm(["test"], sharded);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /10 passing/);
  });

  it("tessera dev --replicas 2 runs the sharded project as two members of its ring, and Ctrl-C drains both", async () => {
    const dev = spawn(process.execPath, [bin, "dev", "--replicas", "2", "--no-watch"], {
      cwd: sharded,
      env: { ...process.env, CI: "1" },
    });
    let output = "";
    dev.stdout.on("data", (c: Buffer) => (output += c.toString()));
    dev.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => dev.on("exit", (code) => resolve(code)));
    try {
      await eventually("dev started both replicas", () => output.includes("starting replica dev-1"), 120_000);
      assert.match(
        output,
        /starting replica dev-0 \(.*TESSERA_NAMESPACE=sharded-operator from tessera\.json, metrics :8080, health :8081\)/,
      );
      assert.match(output, /starting replica dev-1 \(.*metrics :8082, health :8083\)/);
      let ring: RingJson | undefined;
      await eventually(
        `both replicas hold slots in the ring (dev said: ${output.slice(-1500)})`,
        () => {
          const shards = tessera(
            [
              "shards",
              "--json",
              "-n",
              "sharded-operator",
              "--kubeconfig",
              join(sharded, ".tessera/kubeconfig"),
            ],
            sharded,
          );
          if (shards.status !== 0) return false;
          ring = (JSON.parse(shards.out) as RingJson[])[0];
          return (
            ring !== undefined &&
            ring.assignment.releasing.length === 0 &&
            ring.members.filter((m) => m.holding && m.slots > 0).length === 2
          );
        },
        90_000,
      );
      assert.deepEqual(
        ring!.members.map((m) => m.identity),
        ["dev-0", "dev-1"],
      );
      assert.equal(
        ring!.members.reduce((n, m) => n + m.slots, 0),
        ring!.assignment.slotCount,
      );
      // Each replica's lines carry its name (read once the event loop turns: the shards runs above block it).
      await eventually("each replica's lines carry its name", () =>
        ["dev-0", "dev-1"].every((r) =>
          new RegExp(`^${r} \\| \\S+ INFO  member lease acquired`, "m").test(output),
        ),
      );
    } finally {
      dev.kill("SIGINT");
      assert.equal(await exited, 0, output.slice(-2000));
    }
    for (const replica of ["dev-0", "dev-1"]) {
      assert.match(
        output,
        new RegExp(`^${replica} \\| .*member lease released`, "m"),
        `${replica} handed its slots back`,
      );
      assert.match(output, new RegExp(`^${replica} \\| .*manager: stopped`, "m"), `${replica} drained`);
    }
    assert.doesNotMatch(output, /exited \(/, "no replica exited before dev stopped it");
    assert.match(output, /stopping the local control plane/);
  });

  it("scaffolds with --package-manager pnpm (through npx), and pnpm test passes", () => {
    const dir = join(root, "pnpm-operator");
    const made = tessera(["new", dir, "--package-manager", "pnpm", "--yes"], root);
    assert.equal(made.status, 0, made.out);
    assert.ok(existsSync(join(dir, "pnpm-lock.yaml")), "installed by pnpm");
    assert.match(
      readFileSync(join(dir, "Dockerfile"), "utf8"),
      /pnpm@[\d.]+ install --frozen-lockfile --prod/,
    );
    assert.match(readFileSync(join(dir, "README.md"), "utf8"), /npx --yes pnpm@[\d.]+ test/);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      pnpm?: { overrides?: object };
    };
    assert.ok(pkg.pnpm?.overrides, "the tarballs pinned in pnpm.overrides");
    assertDeclaresImports(dir);
    const test = run("npx", ["--yes", `pnpm@${PNPM_VERSION}`, "test"], dir);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /10 passing/);
  });

  // On the projects as the steps above left them (compiled by their generate).
  rbacSuite("its generated RBAC, as the operator's own ServiceAccount", project, "shop.example.com", [
    { kind: "Order", plural: "orders" },
    { kind: "Payment", plural: "payments" },
  ]);
  rbacSuite("a sharded project's generated RBAC (the ring's Leases and ConfigMap)", sharded, "example.com", [
    { kind: "Shard", plural: "shards" },
  ]);

  // The deploy manifests as users render them (kustomize, Helm), taken by the real apiserver.
  describe("its manifests", function () {
    const env = useControlPlane();
    const renderer = () => {
      const build = spawnSync("bash", [join(dirname(bin), "../../tools/render/build.sh")], {
        encoding: "utf8",
      });
      assert.equal(build.status, 0, build.stderr);
      return build.stdout.trim().split("\n").pop()!;
    };

    it("render with kustomize (base, dev, production) and Helm, and the apiserver takes every object, Pods admitted as restricted", async () => {
      const render = renderer();
      const cases: [string, string[]][] = [];
      for (const dir of [project, sharded]) {
        for (const k of ["deploy/base", "deploy/overlays/dev", "deploy/overlays/production"]) {
          cases.push([`${relative(root, dir)} ${k}`, ["kustomize", join(dir, k)]]);
        }
        cases.push([`${relative(root, dir)} chart`, ["helm", join(dir, "chart"), "release", "helm-release"]]);
      }
      await admin(env.cp, "POST", "/api/v1/namespaces", {
        metadata: { name: "helm-release", labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
      });
      for (const [label, args] of cases) {
        const rendered = spawnSync(render, args, { encoding: "utf8" });
        assert.equal(rendered.status, 0, `${label}: ${rendered.stderr}`);
        const docs = parseAllDocuments(rendered.stdout)
          .map((d) => d.toJS() as Manifest | null)
          .filter((d): d is Manifest => d !== null);
        const kinds = docs.map((d) => d.kind).sort();
        for (const kind of [
          "ClusterRole",
          "CustomResourceDefinition",
          "Deployment",
          "PodDisruptionBudget",
          "ServiceAccount",
        ]) {
          assert.ok(kinds.includes(kind), `${label} renders a ${kind}: ${kinds.join(", ")}`);
        }
        if (label.startsWith("sharded"))
          assert.ok(kinds.includes("HorizontalPodAutoscaler"), `${label}: an HPA`);
        // Namespaces and CRDs first, as kubectl apply orders them.
        const order = (d: Manifest) =>
          d.kind === "Namespace" ? 0 : d.kind === "CustomResourceDefinition" ? 1 : 2;
        for (const doc of docs.sort((a, b) => order(a) - order(b))) {
          const res = await applyManifest(env.cp, doc);
          assert.ok(
            res.status === 200 || res.status === 201,
            `${label}: apply ${doc.kind} ${doc.metadata.name}: ${res.status} ${res.body}`,
          );
          if (doc.kind === "Deployment") {
            const warning = String(res.headers["warning"] ?? "");
            assert.doesNotMatch(
              warning,
              /PodSecurity/,
              `${label}: the Deployment's Pods meet restricted: ${warning}`,
            );
          }
        }
      }
    });
  });
});

interface RoleDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** A request as the admin user; throws on a status other than 2xx. */
async function admin(cp: ControlPlane, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await cp.raw(path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  if (res.status < 200 || res.status > 299)
    throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body}`);
  return JSON.parse(res.body);
}

/** Server-side applies one RBAC document as the admin. */
async function applyRbac(cp: ControlPlane, doc: RoleDoc): Promise<void> {
  const plural = `${doc.kind.toLowerCase()}s`;
  const ns = doc.metadata.namespace ? `/namespaces/${doc.metadata.namespace}` : "";
  const res = await cp.raw(
    `/apis/rbac.authorization.k8s.io/v1${ns}/${plural}/${doc.metadata.name}?fieldManager=test&force=true`,
    {
      method: "PATCH",
      body: JSON.stringify(doc),
      headers: { "content-type": "application/apply-patch+yaml" },
    },
  );
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`apply ${doc.kind} ${doc.metadata.name}: HTTP ${res.status}: ${res.body}`);
}

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

const PLURALS: Record<string, string> = {
  Namespace: "namespaces",
  CustomResourceDefinition: "customresourcedefinitions",
  ServiceAccount: "serviceaccounts",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  Deployment: "deployments",
  PodDisruptionBudget: "poddisruptionbudgets",
  HorizontalPodAutoscaler: "horizontalpodautoscalers",
};

/** Server-side applies one rendered object as the admin. */
function applyManifest(cp: ControlPlane, doc: Manifest) {
  const plural = PLURALS[doc.kind];
  if (!plural) throw new Error(`no path for kind ${doc.kind}`);
  const base = doc.apiVersion.includes("/") ? `/apis/${doc.apiVersion}` : `/api/${doc.apiVersion}`;
  const ns = doc.metadata.namespace ? `/namespaces/${doc.metadata.namespace}` : "";
  return cp.raw(`${base}${ns}/${plural}/${doc.metadata.name}?fieldManager=test&force=true`, {
    method: "PATCH",
    body: JSON.stringify(doc),
    headers: { "content-type": "application/apply-patch+yaml" },
  });
}
