import type { Container, ServiceIdentifier } from "inversify";
import type { Runnable } from "@tessera/core";
import type { KubeObject } from "@tessera/client";
import { ControllerBuilder, type ControllerDefinition } from "../builder/controller-builder.js";
import { BuilderError } from "../builder/builder-error.js";
import { cleanupDeclarationProblems } from "../builder/finalizer-declaration.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import type { ManagedRunnable, PluginClass, ReconcilerPlugin } from "./plugin.js";
import { UnboundTokenError } from "./unbound-token-error.js";
import type {
  AdmissionWebhookPlugin,
  AnyAdmissionWebhookPlugin,
} from "../webhook/admission-webhook-plugin.js";
import type { Conversion } from "../webhook/conversion.js";
import { admissionDefinitionOf } from "../webhook/webhook-definition-of.js";
import type { AdmissionWebhookDefinition } from "../webhook/webhook-definition.js";

/** An admission webhook plugin as the manager serves it: its declaration and its instance. */
export interface WebhookDeclaration {
  readonly definition: AdmissionWebhookDefinition;
  readonly plugin: AdmissionWebhookPlugin<KubeObject>;
}

/** A controller's declaration and its reconciler, as the manager builds it. */
export interface ControllerDeclaration {
  readonly definition: ControllerDefinition<KubeObject>;
  readonly reconciler: Reconciler<KubeObject>;
}

/** A runnable the manager runs, with whether it waits for the Lease and its name for logs. */
export interface RegisteredRunnable {
  readonly runnable: Runnable<unknown>;
  readonly needsLeader: boolean;
  readonly name: string;
}

type AnyClass = PluginClass<object, never[]>;
type PendingController =
  | { readonly type: "class"; readonly plugin: PluginClass<ReconcilerPlugin<never>, never[]> }
  | ({ readonly type: "defined" } & ControllerDeclaration);
type PendingRunnable =
  | { readonly type: "instance"; readonly runnable: ManagedRunnable; readonly needsLeader: boolean }
  | { readonly type: "class"; readonly plugin: PluginClass<ManagedRunnable, never[]> };

/**
 * The plugins registered with a manager and their injection: each class is
 * bound in the container as a singleton built from its `static inject`
 * tokens (or inversify's decorators); instances and declared controllers are
 * kept as given. Resolved once, when the manager runs.
 */
export class PluginRegistry {
  private readonly controllers: PendingController[] = [];
  private readonly runnables: PendingRunnable[] = [];
  private readonly classes: AnyClass[] = [];
  private readonly webhookClasses: PluginClass<AnyAdmissionWebhookPlugin, never[]>[] = [];
  private readonly conversionList: Conversion[] = [];

  constructor(private readonly container: Container) {}

  /** Binds a reconciler, webhook or runnable class; throws a TypeError naming the class when it is none. */
  addClass(cls: AnyClass): void {
    this.bindClass(cls);
    const prototype = cls.prototype as Record<string, unknown>;
    if (typeof prototype["webhook"] === "function") {
      this.webhookClasses.push(cls as PluginClass<AnyAdmissionWebhookPlugin, never[]>);
    } else if (typeof prototype["reconcile"] === "function") {
      if (typeof prototype["controller"] !== "function") {
        throw new TypeError(
          `${cls.name}: a reconciler plugin needs a controller(on) method returning on.for(kind)...; ` +
            `or declare it with manager.controller().for(kind).complete(reconciler)`,
        );
      }
      this.controllers.push({ type: "class", plugin: cls as PluginClass<ReconcilerPlugin<never>, never[]> });
    } else if (typeof prototype["run"] === "function") {
      this.runnables.push({ type: "class", plugin: cls as PluginClass<ManagedRunnable, never[]> });
    } else {
      throw new TypeError(
        `${cls.name}: not a plugin: a class must have reconcile() and controller() (a reconciler), webhook(on) (an admission webhook) or run(signal) (a runnable)`,
      );
    }
  }

  /** Adds a kind's conversion (from `defineConversion`). */
  addConversion(conversion: Conversion): void {
    this.conversionList.push(conversion);
  }

  /** The conversions registered. */
  conversions(): readonly Conversion[] {
    return this.conversionList;
  }

  /** Every admission webhook plugin registered, built from the container, with its declaration. */
  webhookDeclarations(): WebhookDeclaration[] {
    return this.webhookClasses.map((cls) => {
      const plugin = this.container.get<AdmissionWebhookPlugin<KubeObject>>(
        cls as ServiceIdentifier<AdmissionWebhookPlugin<KubeObject>>,
      );
      return { definition: admissionDefinitionOf(plugin), plugin };
    });
  }

  addRunnable(runnable: Runnable<unknown>, needsLeader: boolean): void {
    this.runnables.push({ type: "instance", runnable, needsLeader });
  }

  addController(declaration: ControllerDeclaration): void {
    this.controllers.push({ type: "defined", ...declaration });
  }

  /**
   * Throws an {@link UnboundTokenError} for the first `static inject` token
   * of a registered class that nothing binds: the manager calls it before it
   * starts anything.
   */
  checkInjections(): void {
    for (const cls of this.classes) {
      const tokens = (cls.inject ?? []) as readonly unknown[];
      tokens.forEach((token, index) => {
        if (typeof token !== "symbol") {
          throw new UnboundTokenError(cls.name, index, `${String(token)}: not a token; an import cycle?`);
        }
        if (!this.container.isBound(token)) {
          throw new UnboundTokenError(cls.name, index, token.description ?? token.toString());
        }
      });
    }
  }

  /**
   * Every controller declared, in order; a class plugin is built from the
   * container when its turn comes (lazily, so a controller's build may fail
   * before the next reconciler is constructed).
   */
  *controllerDeclarations(): Generator<ControllerDeclaration> {
    for (const pending of this.controllers) {
      if (pending.type === "defined") {
        yield pending;
        continue;
      }
      const instance = this.container.get<ReconcilerPlugin<KubeObject>>(
        pending.plugin as ServiceIdentifier<ReconcilerPlugin<KubeObject>>,
      );
      const definition = instance.controller(new ControllerBuilder()).build();
      const mismatch = cleanupDeclarationProblems(
        definition.finalizer,
        typeof instance.cleanup === "function",
      );
      if (mismatch.length > 0)
        throw new BuilderError(`${definition.name} (${pending.plugin.name})`, mismatch);
      yield { definition, reconciler: instance };
    }
  }

  /** Every runnable registered, its class plugins built from the container. */
  registeredRunnables(): RegisteredRunnable[] {
    return this.runnables.map((pending) => {
      if (pending.type === "instance") {
        return {
          runnable: pending.runnable,
          needsLeader: pending.needsLeader,
          name: runnableName(pending.runnable),
        };
      }
      const runnable = this.container.get<ManagedRunnable>(
        pending.plugin as ServiceIdentifier<ManagedRunnable>,
      );
      return { runnable, needsLeader: runnable.needsLeader ?? true, name: pending.plugin.name };
    });
  }

  private bindClass(plugin: AnyClass): void {
    const id = plugin as unknown as ServiceIdentifier<object>;
    if (this.container.isBound(id)) return;
    const tokens = plugin.inject;
    if (tokens !== undefined) {
      if (!Array.isArray(tokens)) throw new TypeError(`${plugin.name}.inject must be an array of tokens`);
      this.classes.push(plugin);
      this.container
        .bind(id)
        .toDynamicValue((context) => new plugin(...tokens.map((t: symbol) => context.get<never>(t))))
        .inSingletonScope();
      return;
    }
    if (plugin.length > 0) {
      // Without `static inject` inversify needs its own decorator metadata; say how to give it either way.
      this.container.bind(id).toSelf().inSingletonScope();
      return;
    }
    this.container
      .bind(id)
      .toDynamicValue(() => new plugin())
      .inSingletonScope();
  }
}

function runnableName(runnable: Runnable<unknown>): string {
  const name = (runnable as { name?: unknown }).name;
  return typeof name === "string" ? name : (runnable.constructor?.name ?? "runnable");
}
