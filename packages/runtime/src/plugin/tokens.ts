import type { KubeConfigLike, ApiClient, ApiReader, Client, RestMapper } from "@tessera/client";
import type { Meter, Tracer } from "@opentelemetry/api";
import type { Clock, Logger, RandomSource } from "@tessera/core";
import type { SharedInformerFactory } from "@tessera/informers";
import type { EventRecorder } from "../client/event-recorder.js";
import type { ManagerConfig } from "../config/manager-config.js";
import type { MetricsEndpoint } from "../server/metrics-endpoint.js";
import type { CertificateSource } from "../webhook/certificate-source.js";

declare const tokenType: unique symbol;

/**
 * A service identifier in a manager's container that carries the type bound
 * under it, so `manager.get(Tokens.Client)` is a `Client` and a constructor's
 * `static inject` list is checked against its parameters.
 */
export type Token<T> = symbol & { readonly [tokenType]?: T };

/** A new {@link Token}; `description` names it in container errors. */
export function token<T>(description: string): Token<T> {
  return Symbol(description);
}

/**
 * What the manager binds in its container, one token per service. A test
 * swaps any of them before `run` (`manager.rebind(Tokens.Clock, fake)`);
 * a reconciler lists the ones it needs in `static inject`. A token of your
 * own (`token<T>(name)`) is bound with `manager.provide(token, value)`.
 */
export const Tokens = Object.freeze({
  /** The manager's validated configuration. */
  Config: token<ManagerConfig>("tessera.Config"),
  /** The KubeConfig every client authenticates with (client-node's, or the lean one `loadKubeConfig` makes). */
  KubeConfig: token<KubeConfigLike>("tessera.KubeConfig"),
  /** The split client: reads from the informer cache, writes to the API server. */
  Client: token<Client>("tessera.Client"),
  /**
   * Reads from the API server, never the cache (controller-runtime's API
   * reader): the same instance as `ApiClient`, typed to read only.
   */
  ApiReader: token<ApiReader>("tessera.ApiReader"),
  /** The uncached client: reads from the API server, and writes; for code that must read fresh before it writes. */
  ApiClient: token<ApiClient>("tessera.ApiClient"),
  /** Kinds by group, version and kind, from the API server's discovery. */
  RestMapper: token<RestMapper>("tessera.RestMapper"),
  /** The informers behind the cache, shared by every controller of the manager. */
  InformerFactory: token<SharedInformerFactory>("tessera.InformerFactory"),
  /** Records Kubernetes Events about objects. */
  EventRecorder: token<EventRecorder>("tessera.EventRecorder"),
  /** What serves `/metrics` (a `PrometheusMetrics` unless `options.metrics` gives one); `Meter` defaults to its meter. */
  Metrics: token<MetricsEndpoint>("tessera.Metrics"),
  Clock: token<Clock>("tessera.Clock"),
  Random: token<RandomSource>("tessera.Random"),
  Logger: token<Logger>("tessera.Logger"),
  Meter: token<Meter>("tessera.Meter"),
  Tracer: token<Tracer>("tessera.Tracer"),
  /**
   * Where the webhook server's certificate comes from; resolved only when
   * webhooks are registered. Default, by `webhook.certificates.source`: the
   * Secret the operator keeps and rotates itself, its CA bundle injected
   * into its webhook configurations and CRDs (`secret`), or the files in
   * `webhook.certDir`, reloaded when they change (`files`). Bind your own
   * source to serve another way.
   */
  WebhookCertificateSource: token<CertificateSource>("tessera.WebhookCertificateSource"),
});
