import type { KubeConfigLike } from "@tessera/client";
import type { Instrumentation } from "@tessera/core";
import type { ManagerConfigInput } from "../config/manager-config.js";
import type { MetricsEndpoint } from "../server/metrics-endpoint.js";

/**
 * What `Manager.create()` takes; everything is optional. Configuration comes
 * from `config` (code), then the file `configFile` (or `TESSERA_CONFIG`),
 * then `TESSERA_*` variables of `env`, each overriding the one before.
 * Instrumentation given here replaces the defaults (a JSON logger on stderr
 * at `config.logLevel`, the system clock, the manager's Prometheus meter).
 */
export interface ManagerOptions extends Instrumentation {
  config?: ManagerConfigInput;
  configFile?: string;
  /** Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The cluster to talk to. Default: `config.kubeconfig`, else `KUBECONFIG`,
   * else the in-cluster service account, else `~/.kube/config`.
   */
  kubeConfig?: KubeConfigLike;
  /**
   * What serves `/metrics` and gives the default meter. Default: a
   * `PrometheusMetrics` (a Prometheus exposition behind the OpenTelemetry
   * metrics API, without the SDK); `await OpenTelemetrySdkMetrics.create()`
   * (from `@tessera/runtime/server`) for the OpenTelemetry SDK, e.g. to add
   * an OTLP exporter.
   */
  metrics?: MetricsEndpoint;
}
