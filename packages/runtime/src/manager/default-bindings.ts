import type { KubeConfig } from "@kubernetes/client-node";
import { metrics, trace } from "@opentelemetry/api";
import { defaultRandom, JsonLogger, SystemClock, withFields } from "@tessera/core";
import { SharedInformerFactory, stripManagedFields } from "@tessera/informers";
import type { Container } from "inversify";
import type { ManagerConfig } from "../config/manager-config.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import type { ManagerOptions } from "./manager-options.js";

const SCOPE = "@tessera/runtime";

/**
 * Binds what every manager's container holds (see {@link Tokens}). Services
 * that depend on others are bound as lazy singletons, so a binding a test
 * swaps before `run` (the clock, the KubeConfig) is the one they get.
 */
export function bindDefaults(
  container: Container,
  config: ManagerConfig,
  kubeConfig: KubeConfig,
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
  constant(Tokens.Meter, options.meter ?? metrics.getMeter(SCOPE));
  constant(Tokens.Tracer, options.tracer ?? trace.getTracer(SCOPE));
  container
    .bind(Tokens.InformerFactory)
    .toDynamicValue(
      (ctx) =>
        new SharedInformerFactory({
          kubeConfig: ctx.get(Tokens.KubeConfig),
          // Reconcilers never read managedFields; dropping them saves a third of a cached object.
          transform: stripManagedFields,
          clock: ctx.get(Tokens.Clock),
          random: ctx.get(Tokens.Random),
          logger: withFields(ctx.get(Tokens.Logger), { component: "informers" }),
          meter: ctx.get(Tokens.Meter),
          tracer: ctx.get(Tokens.Tracer),
        }),
    )
    .inSingletonScope();
}

/**
 * The KubeConfig of `config.kubeconfig`, else client-node's default search
 * (`KUBECONFIG`, the in-cluster service account, `~/.kube/config`).
 */
export async function loadDefaultKubeConfig(config: ManagerConfig): Promise<KubeConfig> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  if (config.kubeconfig !== undefined) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) {
    throw Object.assign(
      new Error(
        "no Kubernetes cluster configured: set KUBECONFIG or TESSERA_KUBECONFIG to a kubeconfig file, " +
          "or run in a pod with a service account",
      ),
      { exitCode: 2 },
    );
  }
  return kc;
}
