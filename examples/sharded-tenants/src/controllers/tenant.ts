import type { Clock } from "@tessera/runtime";
import {
  ConfigMaps,
  ServiceAccounts,
  applyStatusIfChanged,
  isNotFound,
  setCondition,
  setControllerReference,
  Tokens,
  type Client,
  type ControllerBuilder,
  type EventRecorder,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
} from "@tessera/runtime";
import { Tenants, type Tenant } from "../generated/tenant.js";

/**
 * Keeps, for each Tenant, a settings ConfigMap and a ServiceAccount named
 * `tenant-<name>` in its namespace, both owned by the Tenant (so they go with
 * it), and reports Ready with the ServiceAccount's name. Three writes at most
 * per change (two applies and a status), none when nothing changed: the kind
 * of small, real cost a controller of many objects pays per object. Sharded:
 * every replica reconciles its share of the Tenants.
 */
export class TenantReconciler implements ReconcilerPlugin<Tenant> {
  static readonly inject = [Tokens.Client, Tokens.Clock, Tokens.EventRecorder] as const;
  constructor(
    private readonly client: Client,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
  ) {}

  controller(on: ControllerBuilder) {
    return on.for(Tenants).owns(ConfigMaps).owns(ServiceAccounts).mode("sharded");
  }

  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Tenant>) {
    // One info line per reconcile with its span on the wall clock, which every
    // process on a machine shares: an outside observer (the fault soak) checks
    // from these that no Tenant is reconciled by two replicas at once. A
    // reconcile that finds no Tenant counts too: a reconciler that cleans up
    // after a missing object would act on it.
    const startedAt = this.clock.wallTime().getTime();
    const tenant = ctx.current(); // from the cache; undefined once deleted
    try {
      // Without a Tenant, its ConfigMap and ServiceAccount go with it (owner references).
      if (tenant) await this.provision(tenant, name, namespace, ctx);
    } finally {
      ctx.logger.info("reconciled", {
        found: tenant !== undefined,
        generation: tenant?.metadata?.generation,
        startedAt,
        endedAt: this.clock.wallTime().getTime(),
      });
    }
  }

  private async provision(
    tenant: Tenant,
    name: string,
    namespace: Request["namespace"],
    ctx: ReconcileContext<Tenant>,
  ) {
    const spec = tenant.spec;
    const objectName = `tenant-${name}`;
    const labels = { "tenancy.example.com/tenant": name };
    await this.client.apply(
      ConfigMaps,
      setControllerReference(tenant, {
        metadata: { name: objectName, namespace, labels },
        data: {
          displayName: spec?.displayName ?? name,
          tier: spec?.tier ?? "free",
          owners: (spec?.owners ?? []).join(","),
        },
      }),
      { force: true, signal: ctx.signal },
    );
    await this.client.apply(
      ServiceAccounts,
      setControllerReference(tenant, { metadata: { name: objectName, namespace, labels } }),
      { force: true, signal: ctx.signal },
    );

    const generation = tenant.metadata?.generation;
    const { conditions } = setCondition(
      tenant.status?.conditions,
      {
        type: "Ready",
        status: "True",
        reason: "Provisioned",
        message: `ConfigMap and ServiceAccount ${objectName} match the spec`,
        observedGeneration: generation,
      },
      this.clock.wallTime(),
    );
    try {
      const { written } = await applyStatusIfChanged(
        this.client,
        Tenants,
        tenant,
        { observedGeneration: generation, serviceAccount: objectName, conditions },
        { signal: ctx.signal },
      );
      if (written) {
        this.events.record(tenant, {
          type: "Normal",
          reason: "Provisioned",
          action: "Apply",
          note: `tenant ${spec?.displayName ?? name} (${spec?.tier ?? "free"}) is provisioned`,
        });
      }
    } catch (err) {
      if (isNotFound(err)) return; // deleted since the cache was read: nothing left to report
      throw err;
    }
  }
}
