/** How a controller runs across an operator's replicas. */
export type ControllerMode = "leader" | "sharded" | "every-replica";

/**
 * The manager's configuration once loaded and validated: every field has
 * its value (defaults filled). Written by operators as code, a YAML or JSON
 * file, and `TESSERA_*` environment variables (see `loadConfig`).
 */
export interface ManagerConfig {
  /** The operator's name: default field manager, Lease and ring name prefix, metric label. Default "tessera-operator". */
  name: string;
  /**
   * Where the manager keeps its Leases and ring assignment. Default: the pod's
   * namespace (in-cluster service account), else "default".
   */
  namespace: string;
  /** This replica's identity in elections and rings. Default: `POD_NAME`, else the host name. */
  identity: string;
  /** The field manager of writes and server-side apply. Default: `name`. */
  fieldManager: string;
  /** The mode of controllers that do not choose one. Default "leader". */
  mode: ControllerMode;
  /** Path of a kubeconfig file. Default: `KUBECONFIG`, else in-cluster, else `~/.kube/config`. */
  kubeconfig?: string;
  /**
   * Accept a kubeconfig whose cluster sets `insecure-skip-tls-verify: true`
   * (the API server's certificate is then not checked; the manager warns
   * once). Refused otherwise. Env `TESSERA_ALLOW_INSECURE_TLS`. Default false.
   */
  allowInsecureTLS: boolean;
  /** Lowest level logged: "debug" | "info" | "warn" | "error". Default "info". */
  logLevel: "debug" | "info" | "warn" | "error";
  /**
   * `"gzip"` offers `Accept-Encoding: gzip` on the informers' LISTs and
   * WATCHes; the API server then compresses lists and watch-list streams.
   * Default `"none"` (see docs/benchmarks.md for when gzip pays).
   */
  compression: "gzip" | "none";
  /**
   * `"protobuf"` reads built-in kinds in Kubernetes protobuf (custom
   * resources stay JSON): same objects, a third of the apiserver's CPU for a
   * watch-list, a little more of the operator's. Default `"protobuf"`.
   */
  wire: "protobuf" | "json";
  leaderElection: {
    /** Default: `<name>-leader`. */
    leaseName: string;
    /** Default 15000. */
    leaseDurationMs: number;
    /** Default 10000. */
    renewDeadlineMs: number;
    /** Default 2000. */
    retryPeriodMs: number;
  };
  sharding: {
    /** The ring name of sharded controllers; each controller's ring is `<ring>-<controller>`. Default: `name`. */
    ring: string;
    /** Slots of the ring: a power of two from 1 to 65536. Default 256. */
    slots: number;
  };
  shutdown: {
    /** How long in-flight reconciles may run after SIGTERM before they are aborted. Default 30000. */
    drainTimeoutMs: number;
  };
  /** `/healthz` and `/readyz`: "host:port", ":port", or "0" to turn the server off. Default ":8081". */
  healthBindAddress: string;
  /**
   * `/metrics`: "host:port", ":port", or "0" to turn the server off.
   * Default ":8080", or ":8443" when `metrics.secure`.
   */
  metricsBindAddress: string;
  /**
   * Secure serving of `/metrics`, as controller-runtime's `SecureServing` and
   * `filters.WithAuthenticationAndAuthorization`; the probes stay plain HTTP
   * on `healthBindAddress`. A production deployment should set
   * `secure: true` (auth follows) and bind the operator a ClusterRole
   * allowing `create` on `tokenreviews` and `subjectaccessreviews`.
   */
  metrics: {
    /** HTTPS instead of HTTP. Default false. */
    secure: boolean;
    /**
     * PEM certificate file (e.g. a mounted Secret's `tls.crt`), given with
     * `keyFile`. Absent (with `secure`): a self-signed certificate made at start.
     */
    certFile?: string;
    /** PEM private key file of `certFile` (e.g. `tls.key`). */
    keyFile?: string;
    /**
     * Authenticate each scrape's bearer token by a TokenReview and authorize
     * its user by a SubjectAccessReview for `get` on the path (`/metrics`):
     * 401 without a valid token, 403 for a user RBAC does not allow.
     * Default: `secure`.
     */
    auth: boolean;
  };
  cache: {
    /** How long start-up waits for caches to sync before failing. Default 120000. */
    syncTimeoutMs: number;
  };
  /** Per-controller overrides, by controller name. */
  controllers: Record<string, ControllerConfig>;
}

/** What configuration may override for one controller. */
export interface ControllerConfig {
  mode?: ControllerMode;
  /** Max concurrent reconciles. */
  concurrency?: number;
  /** Per-reconcile timeout; 0 for none. */
  reconcileTimeoutMs?: number;
}

/** What code passes: any subset, deep. */
export type ManagerConfigInput = {
  [K in keyof ManagerConfig]?: ManagerConfig[K] extends Record<string, unknown>
    ? Partial<ManagerConfig[K]>
    : ManagerConfig[K];
};
