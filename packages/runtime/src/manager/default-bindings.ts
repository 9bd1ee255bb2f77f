import type { KubeConfigLike } from "@tessera/client";
import { trace } from "@opentelemetry/api";
import { defaultRandom, JsonLogger, MetricGroup, SystemClock, withFields } from "@tessera/core";
import { SharedInformerFactory, stripManagedFields } from "@tessera/informers";
import type { Container, ResolutionContext } from "inversify";
import { ApiClient, DiscoveryRestMapper, KubeTransport } from "@tessera/client";
import { CachedClient } from "../client/cached-client.js";
import { DeclaredCaches } from "../client/declared-caches.js";
import { ReadYourWrites } from "../client/read-your-writes.js";
import { OwnerSlotLabels } from "../client/owner-slot-labels.js";
import { KubeEventRecorder } from "../client/kube-event-recorder.js";
import type { ManagerConfig } from "../config/manager-config.js";
import { PrometheusMetrics } from "../server/prometheus-metrics.js";
import { ShardedKinds } from "./sharded-kinds.js";
import { FileCertificateSource } from "../webhook/file-certificate-source.js";
import { secretCertificateSource } from "../webhook/secret-certificate-wiring.js";
import type { ConversionWebhookDefinition } from "../webhook/webhook-definition.js";
import { token, Tokens, type Token } from "../plugin/tokens.js";
import type { ManagerOptions } from "./manager-options.js";

const SCOPE = "@tessera/runtime";
/** A binding's dependency, typed by its token. */
const use = <T>(ctx: ResolutionContext, id: Token<T>): T => ctx.get<T>(id);

/**
 * The connection pool the clients share; internal: swap the clients, not this.
 * Exported for the manager, whose metrics reviews go through it (not in {@link Tokens}).
 */
export const Transport = token<KubeTransport>("tessera.internal.Transport");

/** The caches the controllers declared: the controller factory fills it, the cached client reads it. Internal. */
export const Caches = token<DeclaredCaches>("tessera.internal.DeclaredCaches");

/** The kinds sharded controllers divide: warns of a second cache of one. Internal. */
export const Sharded = token<ShardedKinds>("tessera.internal.ShardedKinds");

/**
 * Binds what every manager's container holds (see {@link Tokens}). Services
 * that depend on others are bound as lazy singletons, so a binding a test
 * swaps before `run` (the clock, the KubeConfig) is the one they get.
 * Returns what the manager runs once it has stopped: the default event
 * recorder, if one was made, writes its pending series counts and drops its
 * timers.
 */
export function bindDefaults(
  container: Container,
  config: ManagerConfig,
  kubeConfig: KubeConfigLike,
  options: ManagerOptions,
): () => Promise<void> {
  bindConstants(container, config, kubeConfig, options);
  bindInformerFactory(container);
  bindClients(container);
  bindWebhookCertificateSource(container);
  let recorder: KubeEventRecorder | undefined;
  container
    .bind(Tokens.EventRecorder)
    .toDynamicValue(
      (ctx) =>
        (recorder = new KubeEventRecorder({
          transport: use(ctx, Transport),
          clock: use(ctx, Tokens.Clock),
          logger: withFields(use(ctx, Tokens.Logger), { component: "events" }),
          controller: use(ctx, Tokens.Config).name,
          instance: use(ctx, Tokens.Config).identity,
        })),
    )
    .inSingletonScope();
  return async () => {
    await recorder?.flushAll();
  };
}

/** The configuration, the KubeConfig, and the instrumentation: given in `options`, else the defaults. */
function bindConstants(
  container: Container,
  config: ManagerConfig,
  kubeConfig: KubeConfigLike,
  options: ManagerOptions,
): void {
  const constant = <T>(token: Token<T>, value: T) => container.bind<T>(token).toConstantValue(value);
  constant(Tokens.Config, config);
  constant(Tokens.KubeConfig, kubeConfig);
  constant(Tokens.Clock, options.clock ?? new SystemClock());
  constant(Tokens.Random, options.random ?? defaultRandom);
  constant(
    Tokens.Logger,
    options.logger ?? new JsonLogger({ level: config.logLevel, fields: { logger: config.name } }),
  );
  const prometheus = options.metrics ?? new PrometheusMetrics();
  constant(Tokens.Metrics, prometheus);
  constant(Tokens.Meter, options.meter ?? prometheus.meter(SCOPE));
  constant(Tokens.Tracer, options.tracer ?? trace.getTracer(SCOPE));
}

function bindInformerFactory(container: Container): void {
  container
    .bind(Sharded)
    .toDynamicValue((ctx) => new ShardedKinds(withFields(use(ctx, Tokens.Logger), { component: "caches" })))
    .inSingletonScope();
  container
    .bind(Tokens.InformerFactory)
    .toDynamicValue((ctx) => {
      const sharded = use(ctx, Sharded);
      return new SharedInformerFactory({
        kubeConfig: use(ctx, Tokens.KubeConfig),
        // Reconcilers never read managedFields; dropping them saves a third of a cached object.
        transform: stripManagedFields,
        compression: use(ctx, Tokens.Config).compression,
        wire: use(ctx, Tokens.Config).wire,
        clock: use(ctx, Tokens.Clock),
        random: use(ctx, Tokens.Random),
        logger: withFields(use(ctx, Tokens.Logger), { component: "informers" }),
        meter: use(ctx, Tokens.Meter),
        tracer: use(ctx, Tokens.Tracer),
        onInformer: (informer) => sharded.check(informer),
      });
    })
    .inSingletonScope();
}

/**
 * The conversions registered with the manager, for the certificate source to
 * inject its CA bundle into their CRDs; the manager binds it. Internal.
 */
export const ConversionDefinitions = token<() => readonly ConversionWebhookDefinition[]>(
  "tessera.internal.ConversionDefinitions",
);

/**
 * The webhook server's certificate, by `webhook.certificates.source`: the
 * Secret the operator keeps itself (`secret`, the default; its CA bundle
 * injected into the operator's webhook configurations and the CRDs of the
 * registered conversions), or the files of `webhook.certDir` (`files`).
 * Resolved only by a manager with webhooks.
 */
function bindWebhookCertificateSource(container: Container): void {
  container
    .bind(Tokens.WebhookCertificateSource)
    .toDynamicValue((ctx) => {
      const config = use(ctx, Tokens.Config);
      if (config.webhook.certificates.source === "secret") {
        const conversions = use(ctx, ConversionDefinitions)();
        return secretCertificateSource((token) => use(ctx, token), conversions);
      }
      const certDir = config.webhook.certDir;
      if (certDir === undefined) {
        throw new Error(
          "webhook: webhook.certificates.source is files but webhook.certDir is not set: set it (TESSERA_WEBHOOK_CERT_DIR) to a directory " +
            "holding tls.crt and tls.key (a mounted kubernetes.io/tls Secret), or leave the source to secret, or bind Tokens.WebhookCertificateSource",
        );
      }
      return new FileCertificateSource({
        certDir,
        clock: use(ctx, Tokens.Clock),
        logger: withFields(use(ctx, Tokens.Logger), { component: "webhook" }),
      });
    })
    .inSingletonScope();
}

/** The shared transport, the direct and the cached client, and the RestMapper. */
function bindClients(container: Container): void {
  container
    .bind(Transport)
    .toDynamicValue((ctx) => {
      const logger = withFields(use(ctx, Tokens.Logger), { component: "client" });
      return new KubeTransport(use(ctx, Tokens.KubeConfig), {
        meter: use(ctx, Tokens.Meter),
        // As client-go's default WarningHandler: each warning the API server sends is logged.
        onWarning: (warning, context) =>
          logger.warn(`the API server warned: ${warning}`, {
            verb: context.verb,
            resource: context.resource,
            ...(context.namespace !== undefined ? { namespace: context.namespace } : {}),
            ...(context.name !== undefined ? { name: context.name } : {}),
          }),
      });
    })
    .inSingletonScope();
  container
    .bind(Tokens.ApiClient)
    .toDynamicValue(
      (ctx) =>
        new ApiClient(use(ctx, Tokens.KubeConfig), {
          fieldManager: use(ctx, Tokens.Config).fieldManager,
          transport: use(ctx, Transport),
        }),
    )
    .inSingletonScope();
  container
    .bind(Tokens.ApiReader)
    .toDynamicValue((ctx) => use(ctx, Tokens.ApiClient))
    .inSingletonScope();
  container
    .bind(Caches)
    .toDynamicValue((ctx) => new DeclaredCaches(withFields(use(ctx, Tokens.Logger), { component: "caches" })))
    .inSingletonScope();
  container
    .bind(Tokens.Client)
    .toDynamicValue((ctx) => {
      const { lazy, readYourWritesMs } = use(ctx, Tokens.Config).cache;
      const waits = new MetricGroup(use(ctx, Tokens.Meter)).counter(
        "tessera_client_read_your_writes_waits_total",
        "Cached reads that waited for the cache to see the client's own write, by outcome (seen, timeout)",
      );
      // Exported at zero while off or before the first wait, so a dashboard sees the series.
      for (const outcome of ["seen", "timeout"]) waits.add(0, { outcome });
      // Writes label the children of sharded kinds with their owner's slot (OwnerSlotLabels).
      const writer = new OwnerSlotLabels(use(ctx, Tokens.ApiClient), use(ctx, Sharded));
      return new CachedClient(use(ctx, Tokens.InformerFactory), writer, {
        caches: use(ctx, Caches),
        lazy,
        ...(readYourWritesMs > 0
          ? {
              readYourWrites: new ReadYourWrites({
                timeoutMs: readYourWritesMs,
                clock: use(ctx, Tokens.Clock),
                waits,
              }),
            }
          : {}),
      });
    })
    .inSingletonScope();
  container
    .bind(Tokens.RestMapper)
    .toDynamicValue((ctx) => new DiscoveryRestMapper(use(ctx, Transport)))
    .inSingletonScope();
}
