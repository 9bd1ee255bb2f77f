import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, watch, type FSWatcher } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { ApiClient, loadKubeConfig } from "@tessera/client";
import { CustomResourceDefinitions } from "@tessera/runtime/validation";
import { parseAllDocuments } from "yaml";
import { CliError } from "./cli-error.js";
import { generate } from "./generate.js";
import { prettyLogLine } from "./log-pretty-printer.js";
import { silentProgress, type Progress } from "./progress.js";
import { readProjectConfig } from "./project-config.js";
import { compileProject } from "./compile-project.js";
import { devReplicas, type DevReplica } from "./dev-replicas.js";

/** Options of `tessera dev`. */
export interface DevOptions {
  readonly dir: string;
  /** A cluster to use instead of a local control plane. */
  readonly kubeconfig?: string;
  /** Rebuild and restart on changes under src/ and schemas/ (default true). */
  readonly watch?: boolean;
  /**
   * How many replicas of the operator to run (default 1), each with its own
   * identity and ports and its log lines prefixed with its name (see
   * {@link devReplicas}).
   */
  readonly replicas?: number;
  readonly signal: AbortSignal;
  readonly progress?: Progress;
  /** Where the operator's (pretty-printed) logs and dev's own lines go. */
  readonly out?: NodeJS.WritableStream & { isTTY?: boolean };
}

interface LocalControlPlane {
  start(): Promise<void>;
  stop(): Promise<unknown>;
  writeKubeconfig(path?: string): string;
  raw(
    path: string,
    init?: { method?: string; body?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: string }>;
}

/**
 * Runs the operator from source against a cluster: a local control plane
 * from the project's @tessera/testenv (etcd, kube-apiserver,
 * kube-controller-manager, the CRDs installed, a kubeconfig written to
 * `.tessera/kubeconfig` for kubectl), or the cluster of `kubeconfig`. Its
 * JSON logs are pretty-printed. With `replicas`, that many run side by side,
 * each its own member (identity, ports) and its lines prefixed with its
 * name. On the local control plane, the project's webhooks (its webhook
 * configurations and CRD conversions) point at the first replica, with a CA
 * testenv generates. A change under `src/` rebuilds and restarts them; a
 * change under `schemas/` regenerates first. Ends when `signal` aborts,
 * draining every replica (SIGTERM), then stopping the control plane.
 */
export async function runDev(options: DevOptions): Promise<void> {
  const dir = resolve(options.dir);
  const progress = options.progress ?? silentProgress;
  const out = options.out ?? process.stdout;
  const color = out.isTTY === true && !process.env["NO_COLOR"];
  const say = (line: string) => out.write(`tessera dev: ${line}\n`);
  const config = readProjectConfig(dir);

  let controlPlane: LocalControlPlane | undefined;
  let kubeconfig: string;
  if (options.kubeconfig) {
    kubeconfig = resolve(options.kubeconfig);
    await progress.step(`installing the CRDs into the cluster of ${kubeconfig}`, () =>
      applyCrds(dir, kubeconfig),
    );
  } else {
    const testenv = await importFromProject<{ ControlPlane: new (o: object) => LocalControlPlane }>(
      dir,
      "@tessera/testenv",
    );
    const cp = new testenv.ControlPlane({ controllerManager: true, crds: [join(dir, "deploy/base/crds")] });
    await progress.step(
      "starting a local control plane (etcd, kube-apiserver, kube-controller-manager)",
      () => cp.start(),
    );
    controlPlane = cp;
    mkdirSync(join(dir, ".tessera"), { recursive: true });
    kubeconfig = cp.writeKubeconfig(join(dir, ".tessera/kubeconfig"));
    await cp.raw("/api/v1/namespaces", {
      method: "POST",
      body: JSON.stringify({ metadata: { name: config.namespace } }),
      headers: { "content-type": "application/json" },
    });
    say(
      `local control plane up; for kubectl: export KUBECONFIG=${relative(process.cwd(), kubeconfig) || kubeconfig}`,
    );
  }

  // The project's webhooks, served by the operator in this process: the local
  // control plane calls it at 127.0.0.1 with a CA testenv generated.
  let webhookEnv: Record<string, string> = {};
  let installed: { uninstall(): Promise<void> } | undefined;
  const serveWebhooks = async () => {
    if (!controlPlane) return;
    await installed?.uninstall();
    installed = undefined;
    webhookEnv = {};
    const local = localWebhooks(dir);
    if (local.configurations.length === 0 && local.conversions.length === 0) return;
    const testenv = await importFromProject<{ installWebhooks?: InstallWebhooks }>(dir, "@tessera/testenv");
    if (!testenv.installWebhooks) {
      throw new CliError(
        "the project's @tessera/testenv has no installWebhooks: update @tessera/testenv to run webhooks in tessera dev",
      );
    }
    const served = await testenv.installWebhooks(controlPlane, local);
    installed = served;
    webhookEnv = {
      TESSERA_WEBHOOK_BIND_ADDRESS: served.bindAddress,
      TESSERA_WEBHOOK_CERT_DIR: served.certDir,
    };
    say(`webhooks: the local control plane calls the operator at https://${served.bindAddress}`);
  };

  // TESSERA_NAMESPACE comes from tessera.json; a replica's identity and ports from its place among them.
  const replicas = devReplicas(options.replicas ?? 1, process.env["TESSERA_IDENTITY"] ?? "dev");
  const running = new Map<DevReplica, { proc: ChildProcess; exited: Promise<void> }>();
  const startReplica = (replica: DevReplica) => {
    const name = replicas.length > 1 ? `replica ${replica.identity}` : "the operator";
    const ports =
      replicas.length > 1
        ? `, metrics ${replica.env["TESSERA_METRICS_BIND_ADDRESS"]}, health ${replica.env["TESSERA_HEALTH_BIND_ADDRESS"]}`
        : "";
    say(
      `starting ${name} (node dist/src/main.js; TESSERA_IDENTITY=${replica.identity}, TESSERA_NAMESPACE=${config.namespace} from tessera.json${ports})`,
    );
    const proc = spawn(process.execPath, ["--enable-source-maps", "dist/src/main.js"], {
      cwd: dir,
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        TESSERA_NAMESPACE: config.namespace,
        ...replica.env,
        // The webhooks are installed for one server: the first replica serves them, the others run without.
        ...(replica === replicas[0]
          ? webhookEnv
          : Object.keys(webhookEnv).length > 0
            ? { TESSERA_WEBHOOK_BIND_ADDRESS: "0" }
            : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: Ctrl-C reaches dev only, which then stops the
      // operator with one SIGTERM (a second signal would skip its drain).
      detached: true,
    });
    for (const stream of [proc.stdout, proc.stderr]) {
      createInterface({ input: stream }).on("line", (line) =>
        out.write(replica.prefix + prettyLogLine(line, color) + "\n"),
      );
    }
    const exited = new Promise<void>((resolveExit) =>
      proc.on("exit", (code, signal) => {
        if (running.get(replica)?.proc === proc) {
          running.delete(replica);
          say(`${name} exited (${signal ?? `code ${code}`}); waiting for a change to restart it`);
        }
        resolveExit();
      }),
    );
    running.set(replica, { proc, exited });
  };
  const startOperator = () => replicas.forEach(startReplica);
  // Every replica drains at once, as a Deployment's Pods do when it is deleted.
  const stopOperator = () =>
    Promise.all(
      [...running].map(async ([replica, { proc, exited }]) => {
        running.delete(replica);
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );

  const watchers: FSWatcher[] = [];
  try {
    await serveWebhooks();
    await progress.step("compiling (tsc)", () => Promise.resolve(compileProject(dir)));
    startOperator();
    if (options.watch ?? true) {
      let pending: NodeJS.Timeout | undefined;
      const changed = new Set<string>();
      let rebuilding = Promise.resolve();
      const rebuild = async () => {
        const files = [...changed];
        changed.clear();
        say(`${files.join(", ")} changed; rebuilding`);
        try {
          if (files.some((f) => f.startsWith("schemas/"))) {
            await generate({ dir });
            if (controlPlane) {
              await applyCrds(dir, kubeconfig);
              // The CRDs as applied name the Service again: point their conversion back here.
              await serveWebhooks();
            }
          }
          compileProject(dir);
        } catch (err) {
          say(`not restarted: ${(err as Error).message}`);
          return;
        }
        await stopOperator();
        startOperator();
      };
      for (const sub of ["src", "schemas"]) {
        if (!existsSync(join(dir, sub))) continue;
        watchers.push(
          watch(join(dir, sub), { recursive: true }, (_event, file) => {
            if (!file || String(file).startsWith("generated")) return; // generate's own output
            changed.add(`${sub}/${String(file)}`);
            clearTimeout(pending);
            pending = setTimeout(() => {
              rebuilding = rebuilding.then(rebuild);
            }, 300);
          }),
        );
      }
      say("watching src/ and schemas/ (Ctrl-C to stop)");
    }
    await new Promise<void>((resolveWait) => {
      if (options.signal.aborted) return resolveWait();
      options.signal.addEventListener("abort", () => resolveWait(), { once: true });
    });
  } finally {
    for (const w of watchers) w.close();
    await stopOperator();
    await installed?.uninstall().catch(() => {});
    if (controlPlane) {
      say("stopping the local control plane");
      await controlPlane.stop();
    }
  }
}

type InstallWebhooks = (
  cp: LocalControlPlane,
  options: { configurations: Record<string, unknown>[]; conversions: string[] },
) => Promise<{ bindAddress: string; certDir: string; uninstall(): Promise<void> }>;

/**
 * What `tessera generate` wrote for the project's webhooks: its webhook
 * configurations (deploy/base/webhooks/manifests.yaml) and the CRDs whose
 * conversion is a webhook (deploy/base/crds/).
 */
function localWebhooks(dir: string): { configurations: Record<string, unknown>[]; conversions: string[] } {
  const read = (file: string) =>
    existsSync(file)
      ? parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS() as Record<string, unknown> | null)
      : [];
  const configurations = read(join(dir, "deploy/base/webhooks/manifests.yaml")).filter(
    (d): d is Record<string, unknown> =>
      d !== null &&
      (d["kind"] === "MutatingWebhookConfiguration" || d["kind"] === "ValidatingWebhookConfiguration"),
  );
  const crdDir = join(dir, "deploy/base/crds");
  const conversions = (existsSync(crdDir) ? readdirSync(crdDir) : [])
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .flatMap((f) => read(join(crdDir, f)))
    .filter(
      (d) =>
        (d?.["spec"] as { conversion?: { strategy?: string } } | undefined)?.conversion?.strategy ===
        "Webhook",
    )
    .map((d) => (d!["metadata"] as { name: string }).name);
  return { configurations, conversions };
}

/** Imports a package as the project resolves it (its own installed copy). */
async function importFromProject<T>(dir: string, name: string): Promise<T> {
  let path: string;
  try {
    path = createRequire(join(dir, "package.json")).resolve(name);
  } catch {
    throw new CliError(
      `${name} is not installed in ${dir}; run npm install (it is a devDependency of generated projects)`,
    );
  }
  return (await import(pathToFileURL(path).href)) as T;
}

/** Server-side applies every CRD under deploy/base/crds to the cluster of `kubeconfig`. */
async function applyCrds(dir: string, kubeconfig: string): Promise<void> {
  const client = new ApiClient(await loadKubeConfig({ file: kubeconfig }), { fieldManager: "tessera-dev" });
  const crdDir = join(dir, "deploy/base/crds");
  for (const file of readdirSync(crdDir).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")) {
    for (const doc of parseAllDocuments(readFileSync(join(crdDir, file), "utf8"))) {
      await client.apply(CustomResourceDefinitions, doc.toJS() as never, { force: true });
    }
  }
}
