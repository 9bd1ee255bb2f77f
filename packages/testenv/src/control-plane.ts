import { request as httpsRequest } from "node:https";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import {
  ControlPlaneBinariesNotFoundError,
  resolveControlPlaneBinaries,
  type ControlPlaneBinaries,
} from "./binaries.js";
import { generateControlPlaneCertificates, type ControlPlaneCertificates } from "./certificates.js";
import { installCrds } from "./crds.js";
import { freePort } from "./free-port.js";
import { ManagedProcess } from "./child-process.js";

/** Options for {@link ControlPlane}. */
export interface ControlPlaneOptions {
  /**
   * kube-apiserver feature gates, merged over the default
   * `{ ShardedListAndWatch: true }`.
   */
  featureGates?: Record<string, boolean>;
  /** Extra kube-apiserver flags, e.g. `["--watch-cache=false"]`; a later flag wins. */
  apiserverFlags?: string[];
  /** Extra etcd flags. */
  etcdFlags?: string[];
  /** Binaries to use instead of the resolved ones. */
  binaries?: ControlPlaneBinaries;
  /** How long to wait for readiness; default 60 s. */
  startTimeoutMs?: number;
  /**
   * Runs a real kube-controller-manager too (off by default: tests that do
   * not need it pay nothing), so garbage collection, namespace deletion,
   * default ServiceAccounts and workload status happen as in a cluster. With
   * it on, ServiceAccount admission is on again. `true` runs
   * {@link defaultControllers}.
   */
  controllerManager?: boolean | ControllerManagerOptions;
  /**
   * CustomResourceDefinition files or directories to install (see
   * {@link installCrds}) once the apiserver is ready and before the
   * controller manager starts, so its garbage collector knows the kinds from
   * the start (it rediscovers kinds only every 30 s).
   */
  crds?: (string | Record<string, unknown>)[];
}

/** Options for the kube-controller-manager a {@link ControlPlane} runs. */
export interface ControllerManagerOptions {
  /**
   * The controllers to run, by kube-controller-manager's names (its
   * `--controllers` flag); default {@link defaultControllers}. To add one:
   * `[...defaultControllers, "statefulset-controller"]`.
   */
  controllers?: readonly string[];
  /** Extra kube-controller-manager flags; a later flag wins. */
  flags?: string[];
}

/**
 * The controllers a test control plane runs by default: what operators'
 * owned objects rely on (garbage collection, namespaces, ServiceAccounts and
 * their tokens, Deployments down to Pods, Jobs, EndpointSlices).
 */
export const defaultControllers: readonly string[] = Object.freeze([
  "garbage-collector-controller",
  "namespace-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "deployment-controller",
  "replicaset-controller",
  "job-controller",
  "endpointslice-controller",
]);

/** Raised when a control-plane process fails to start; carries its own output. */
export class ControlPlaneStartError extends Error {
  override name = "ControlPlaneStartError";
  constructor(
    message: string,
    public logFile: string,
  ) {
    super(message);
  }
}

/** Result of an HTTPS request to the apiserver as the admin user. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A real etcd and kube-apiserver on free loopback ports with a fresh data
 * directory, generated certificates and RBAC on. Several can run side by side.
 *
 * ```ts
 * const cp = new ControlPlane();
 * await cp.start();
 * const core = cp.kubeConfig.makeApiClient(CoreV1Api);
 * await cp.stop();
 * ```
 */
export class ControlPlane {
  private dir: string | undefined;
  private certs: ControlPlaneCertificates | undefined;
  private etcd: ManagedProcess | undefined;
  private apiserver: ManagedProcess | undefined;
  private controllerManager: ManagedProcess | undefined;
  private config: KubeConfig | undefined;
  private readonly processes = new Set<ManagedProcess>();
  private readonly onExit = () => {
    for (const p of this.processes) p.kill();
  };
  /** Loopback port of kube-apiserver's secure endpoint. */
  apiserverPort = 0;
  /** Loopback port of etcd's client endpoint. */
  etcdPort = 0;
  /** Loopback port of kube-controller-manager's secure endpoint (0 when it does not run). */
  controllerManagerPort = 0;

  constructor(private readonly options: ControlPlaneOptions = {}) {}

  /** `https://127.0.0.1:<port>`. */
  get apiserverUrl(): string {
    return `https://127.0.0.1:${this.apiserverPort}`;
  }

  /** `http://127.0.0.1:<port>`. */
  get etcdUrl(): string {
    return `http://127.0.0.1:${this.etcdPort}`;
  }

  /** The admin KubeConfig (client certificate in group system:masters). */
  get kubeConfig(): KubeConfig {
    if (!this.config) throw new Error("ControlPlane.kubeConfig: call start() first");
    return this.config;
  }

  /** The CA certificate, PEM, for clients built by hand. */
  get caPem(): string {
    return this.requireCerts().ca.certPem;
  }

  /** The admin client certificate and key, PEM. */
  get adminCredentials(): { certPem: string; keyPem: string } {
    return this.requireCerts().admin;
  }

  /** Log files of etcd, kube-apiserver and kube-controller-manager (kept by {@link stop} when asked). */
  get logFiles(): string[] {
    return [this.etcd?.logFile, this.apiserver?.logFile, this.controllerManager?.logFile].filter(
      (f): f is string => !!f,
    );
  }

  /** Whether this control plane runs kube-controller-manager. */
  get withControllerManager(): boolean {
    return !!this.options.controllerManager;
  }

  /** Whether its kube-controller-manager process is running now. */
  get controllerManagerRunning(): boolean {
    return this.controllerManager?.running ?? false;
  }

  /** How many of this control plane's processes are running (0 after stop or a failed start). */
  get runningProcesses(): number {
    return this.processes.size;
  }

  /**
   * Starts etcd, then kube-apiserver, and waits for an authenticated /readyz;
   * with the controller manager on, then starts it and waits for its /healthz
   * and for the `default` namespace's ServiceAccount (so Pods can be created
   * as soon as this resolves).
   */
  async start(): Promise<void> {
    if (this.dir) throw new Error("ControlPlane.start: already started");
    const kcm = this.options.controllerManager;
    const binaries =
      this.options.binaries ?? resolveControlPlaneBinaries(process.env, { controllerManager: !!kcm });
    if (kcm && !binaries.kubeControllerManager) {
      throw new ControlPlaneBinariesNotFoundError(
        "ControlPlane: controllerManager is on but the binaries given have no kubeControllerManager path",
      );
    }
    this.dir = mkdtempSync(join(tmpdir(), "tessera-cp-"));
    process.once("exit", this.onExit);
    try {
      mkdirSync(join(this.dir, "logs"));
      const pki = join(this.dir, "pki");
      mkdirSync(pki);
      this.certs = await generateControlPlaneCertificates();
      const files: Record<string, string> = {
        "ca.crt": this.certs.ca.certPem,
        "ca.key": this.certs.ca.keyPem,
        "apiserver.crt": this.certs.serving.certPem,
        "apiserver.key": this.certs.serving.keyPem,
        "sa.key": this.certs.serviceAccount.privateKeyPem,
        "sa.pub": this.certs.serviceAccount.publicKeyPem,
        "controller-manager.crt": this.certs.controllerManager.certPem,
        "controller-manager.key": this.certs.controllerManager.keyPem,
      };
      for (const [name, content] of Object.entries(files))
        writeFileSync(join(pki, name), content, { mode: 0o600 });

      this.etcdPort = await freePort();
      const peerPort = await freePort();
      this.etcd = new ManagedProcess(
        "etcd",
        binaries.etcd,
        [
          "--name=default",
          `--data-dir=${join(this.dir, "etcd")}`,
          `--listen-client-urls=${this.etcdUrl}`,
          `--advertise-client-urls=${this.etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
          // Tests throw the data away: fsync buys nothing and costs seconds.
          "--unsafe-no-fsync=true",
          "--log-level=warn",
          ...(this.options.etcdFlags ?? []),
        ],
        join(this.dir, "logs", "etcd.log"),
        this.processes,
      );
      await this.launch(this.etcd, () => this.etcdHealthy());

      this.apiserverPort = await freePort();
      const gates = { ShardedListAndWatch: true, ...this.options.featureGates };
      const gateFlag = Object.entries(gates)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
      this.apiserver = new ManagedProcess(
        "kube-apiserver",
        binaries.kubeApiserver,
        [
          `--etcd-servers=${this.etcdUrl}`,
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          `--secure-port=${this.apiserverPort}`,
          `--cert-dir=${join(this.dir, "apiserver-certs")}`,
          `--tls-cert-file=${join(pki, "apiserver.crt")}`,
          `--tls-private-key-file=${join(pki, "apiserver.key")}`,
          `--client-ca-file=${join(pki, "ca.crt")}`,
          `--service-account-key-file=${join(pki, "sa.pub")}`,
          `--service-account-signing-key-file=${join(pki, "sa.key")}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          "--service-cluster-ip-range=10.0.0.0/24",
          "--authorization-mode=RBAC",
          "--allow-privileged=true",
          // Without a controller manager no ServiceAccount is ever created,
          // and every Pod create would be refused by this admission plugin.
          ...(kcm ? [] : ["--disable-admission-plugins=ServiceAccount"]),
          "--profiling=false",
          // The endpoint reconciler refuses a loopback advertise address.
          "--endpoint-reconciler-type=none",
          `--feature-gates=${gateFlag}`,
          ...(this.options.apiserverFlags ?? []),
        ],
        join(this.dir, "logs", "kube-apiserver.log"),
        this.processes,
      );
      await this.launch(this.apiserver, () => this.apiserverReady());
      this.config = this.buildKubeConfig();
      if (this.options.crds?.length) await installCrds(this, ...this.options.crds);
      if (kcm) await this.startControllerManager(binaries.kubeControllerManager!, kcm === true ? {} : kcm);
    } catch (err) {
      const kept = await this.stop({ keepLogs: true });
      if (err instanceof ControlPlaneStartError && kept) {
        err.logFile = join(kept, basename(err.logFile));
        err.message += `\n(logs kept in ${kept})`;
      }
      throw err;
    }
  }

  /**
   * Stops both processes and removes the temp directory. With `keepLogs`, the
   * logs are first copied to a directory that is returned (and kept).
   */
  async stop(opts: { keepLogs?: boolean } = {}): Promise<string | undefined> {
    await this.controllerManager?.stop();
    await this.apiserver?.stop();
    await this.etcd?.stop();
    process.removeListener("exit", this.onExit);
    let kept: string | undefined;
    if (this.dir) {
      if (opts.keepLogs) {
        kept = mkdtempSync(join(tmpdir(), "tessera-cp-logs-"));
        cpSync(join(this.dir, "logs"), kept, { recursive: true });
      }
      rmSync(this.dir, { recursive: true, force: true });
    }
    this.dir = undefined;
    this.config = undefined;
    return kept;
  }

  /** Restarts kube-apiserver on the same port, keeping the data in etcd. */
  async restartApiserver(): Promise<void> {
    const p = this.requireProcess(this.apiserver);
    await p.stop();
    await this.launch(p, () => this.apiserverReady());
  }

  /** Restarts etcd on the same ports and data dir; kube-apiserver reconnects. */
  async restartEtcd(): Promise<void> {
    const p = this.requireProcess(this.etcd);
    await p.stop();
    await this.launch(p, () => this.etcdHealthy());
    await this.waitFor("kube-apiserver to reconnect to etcd", () => this.apiserverReady());
  }

  /**
   * Restarts kube-controller-manager (as a crash and restart would), and
   * waits for its /healthz. Its controllers then relist and catch up.
   */
  async restartControllerManager(): Promise<void> {
    if (!this.controllerManager) {
      throw new Error(
        "ControlPlane.restartControllerManager: this control plane runs no controller manager; start it with { controllerManager: true }",
      );
    }
    const p = this.requireProcess(this.controllerManager);
    await p.stop();
    await this.launch(p, () => this.controllerManagerHealthy());
  }

  /**
   * Compacts etcd up to its current revision, so that any older
   * resourceVersion gives 410 Gone. kube-apiserver's watch cache would go on
   * serving its own window of recent events from memory, so by default the
   * apiserver is restarted too (its cache then starts above the compacted
   * revision), as a server that has lost that history would behave. With
   * `{ resetWatchCache: false }` only etcd is compacted: reads served from etcd
   * (paginated LISTs, continue tokens) get 410, the watch cache does not.
   * Returns the revision compacted to.
   */
  async compact(opts: { resetWatchCache?: boolean } = {}): Promise<string> {
    const range = await this.etcdPost("/v3/kv/range", { key: Buffer.from("/").toString("base64") });
    const revision = (range.header as { revision: string }).revision;
    await this.etcdPost("/v3/kv/compaction", { revision, physical: true });
    if (opts.resetWatchCache ?? true) await this.restartApiserver();
    return revision;
  }

  /** Writes an admin kubeconfig file and returns its path. */
  writeKubeconfig(path = join(this.requireDir(), "kubeconfig")): string {
    writeFileSync(path, this.kubeConfig.exportConfig(), { mode: 0o600 });
    return path;
  }

  /** An HTTPS request to kube-apiserver as the admin user. */
  raw(
    path: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<RawResponse> {
    const certs = this.requireCerts();
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: this.apiserverPort,
          path,
          method: init.method ?? "GET",
          ca: certs.ca.certPem,
          cert: certs.admin.certPem,
          key: certs.admin.keyPem,
          headers: init.headers,
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`GET ${path}: timed out`)));
      req.on("error", reject);
      req.end(init.body);
    });
  }

  /** The apiserver's Prometheus metrics text. */
  async metrics(): Promise<string> {
    const res = await this.raw("/metrics");
    if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
    return res.body;
  }

  private buildKubeConfig(): KubeConfig {
    const certs = this.requireCerts();
    const kc = new KubeConfig();
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    kc.loadFromOptions({
      clusters: [
        {
          name: "tessera-testenv",
          server: this.apiserverUrl,
          caData: b64(certs.ca.certPem),
          skipTLSVerify: false,
        },
      ],
      users: [
        { name: "tessera-admin", certData: b64(certs.admin.certPem), keyData: b64(certs.admin.keyPem) },
      ],
      contexts: [{ name: "tessera-testenv", cluster: "tessera-testenv", user: "tessera-admin" }],
      currentContext: "tessera-testenv",
    });
    return kc;
  }

  private async startControllerManager(binary: string, opts: ControllerManagerOptions): Promise<void> {
    const dir = this.requireDir();
    const pki = join(dir, "pki");
    // Its own identity (system:kube-controller-manager), as kubeadm sets it up;
    // with --use-service-account-credentials each controller then acts as its
    // own ServiceAccount under the bootstrap RBAC roles, as in a cluster.
    const kubeconfig = join(dir, "controller-manager.kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: testenv",
        "  cluster:",
        `    server: ${this.apiserverUrl}`,
        `    certificate-authority: ${join(pki, "ca.crt")}`,
        "users:",
        "- name: kube-controller-manager",
        "  user:",
        `    client-certificate: ${join(pki, "controller-manager.crt")}`,
        `    client-key: ${join(pki, "controller-manager.key")}`,
        "contexts:",
        "- name: testenv",
        "  context: { cluster: testenv, user: kube-controller-manager }",
        "current-context: testenv",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    this.controllerManagerPort = await freePort();
    const controllers = opts.controllers ?? defaultControllers;
    this.controllerManager = new ManagedProcess(
      "kube-controller-manager",
      binary,
      [
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        // The apiserver has no front-proxy CA, so the configmap lookup would
        // log an error every few seconds; client certificates still verify.
        "--authentication-skip-lookup=true",
        `--client-ca-file=${join(pki, "ca.crt")}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${this.controllerManagerPort}`,
        `--cert-dir=${join(dir, "controller-manager-certs")}`,
        `--controllers=${controllers.join(",")}`,
        "--use-service-account-credentials=true",
        `--service-account-private-key-file=${join(pki, "sa.key")}`,
        `--root-ca-file=${join(pki, "ca.crt")}`,
        "--leader-elect=false",
        "--profiling=false",
        ...(opts.flags ?? []),
      ],
      join(dir, "logs", "kube-controller-manager.log"),
      this.processes,
    );
    await this.launch(this.controllerManager, () => this.controllerManagerHealthy());
    if (controllers.includes("serviceaccount-controller")) {
      const p = this.controllerManager;
      try {
        await this.waitFor(
          "the default ServiceAccount in namespace default",
          async () => (await this.raw("/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
          this.options.startTimeoutMs ?? 60_000,
        );
      } catch {
        throw new ControlPlaneStartError(
          `kube-controller-manager started but did not create the default ServiceAccount in namespace default; its last output (${p.logFile}):\n${p.tail()}`,
          p.logFile,
        );
      }
    }
  }

  private controllerManagerHealthy(): Promise<boolean> {
    // Its serving certificate is self-signed in --cert-dir; /healthz is
    // always allowed, so no credentials are needed.
    return new Promise((resolve) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: this.controllerManagerPort,
          path: "/healthz",
          rejectUnauthorized: false,
          timeout: 2000,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve(false));
      req.end();
    });
  }

  private async launch(p: ManagedProcess, ready: () => Promise<boolean>): Promise<void> {
    p.start();
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void p.waitForExit().then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) {
        throw new ControlPlaneStartError(
          `${p.name} exited during start-up; its last output (${p.logFile}):\n${p.tail()}`,
          p.logFile,
        );
      }
      if (await ready().catch(() => false)) return;
      await sleep(100);
    }
    throw new ControlPlaneStartError(
      `${p.name} was not ready within ${timeoutMs} ms; its last output (${p.logFile}):\n${p.tail()}`,
      p.logFile,
    );
  }

  private async waitFor(what: string, ok: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await ok().catch(() => false)) return;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  private async etcdHealthy(): Promise<boolean> {
    const res = await fetch(`${this.etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return false;
    const body = (await res.json()) as { health?: string };
    return body.health === "true";
  }

  private async apiserverReady(): Promise<boolean> {
    const res = await this.raw("/readyz");
    return res.status === 200;
  }

  private async etcdPost(path: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.etcdUrl}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status}: ${JSON.stringify(json)}`);
    return json;
  }

  private requireDir(): string {
    if (!this.dir) throw new Error("ControlPlane: call start() first");
    return this.dir;
  }

  private requireCerts(): ControlPlaneCertificates {
    if (!this.certs) throw new Error("ControlPlane: call start() first");
    return this.certs;
  }

  private requireProcess(p: ManagedProcess | undefined): ManagedProcess {
    if (!p || !this.dir) throw new Error("ControlPlane: call start() first");
    return p;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
