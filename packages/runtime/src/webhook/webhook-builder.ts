import type { KubeObject } from "@tessera/client";
import { BuilderError } from "../builder/builder-error.js";
import { describeKind, type Kind } from "../builder/kind.js";
import {
  admissionWebhookPath,
  type AdmissionOperation,
  type AdmissionWebhookDefinition,
  type FailurePolicy,
} from "./webhook-definition.js";

/** Options of an admission webhook (`on.for(Widgets, { failurePolicy: "Ignore" })`). */
export interface WebhookOptions {
  /**
   * What the API server does when the webhook cannot answer (down,
   * unreachable, too slow): `Fail` refuses the request (default, as
   * kubebuilder's), `Ignore` lets it through unchecked. Tessera applies the
   * same policy when the handler itself throws or misses its deadline.
   */
  readonly failurePolicy?: FailurePolicy;
  /** The API server's timeout for one call, 1 to 30 seconds; default 10. The handler's own deadline is shorter (see the how-to). */
  readonly timeoutSeconds?: number;
}

/** What a plugin's methods say it does, read from its prototype. */
export interface WebhookMethods {
  readonly defaults: boolean;
  readonly operations: readonly AdmissionOperation[];
}

/**
 * Declares which kind an admission webhook plugin admits, as
 * `controller(on)` declares a reconciler's kinds:
 *
 * ```ts
 * webhook(on: WebhookBuilder) {
 *   return on.for(Widgets, { failurePolicy: "Fail", timeoutSeconds: 5 });
 * }
 * ```
 *
 * Mistakes (no `for`, two, a timeout out of range) are thrown together as
 * one {@link BuilderError} when the manager (or `tessera generate`) reads
 * the declaration.
 */
export class WebhookBuilder<T extends KubeObject = KubeObject> {
  private kind: Kind<T> | undefined;
  private options: WebhookOptions = {};
  private readonly problems: string[] = [];

  /** The kind the webhook admits (its group, version and kind make the paths), and its options. */
  for<U extends KubeObject>(kind: Kind<U>, options: WebhookOptions = {}): WebhookBuilder<U> {
    const self = this as unknown as WebhookBuilder<U>;
    if (self.kind) {
      self.problems.push(
        `for(${describeKind(kind)}) after for(${describeKind(self.kind)}): a webhook plugin admits one kind; write one plugin per kind`,
      );
      return self;
    }
    self.kind = kind;
    self.options = options;
    const timeout = options.timeoutSeconds;
    if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > 30)) {
      self.problems.push(
        `timeoutSeconds ${timeout}: the API server takes a whole number of seconds from 1 to 30`,
      );
    }
    const policy = options.failurePolicy;
    if (policy !== undefined && policy !== "Fail" && policy !== "Ignore") {
      self.problems.push(`failurePolicy ${JSON.stringify(policy)}: "Fail" or "Ignore"`);
    }
    return self;
  }

  /**
   * The definition, given what the plugin implements; throws a
   * {@link BuilderError} naming `plugin` with every mistake.
   */
  build(plugin: string, methods: WebhookMethods): AdmissionWebhookDefinition<T> {
    const problems = [...this.problems];
    if (!this.kind) problems.push("no kind: webhook(on) must return on.for(kind)");
    if (!methods.defaults && methods.operations.length === 0) {
      problems.push(
        "neither default() nor any validateCreate/validateUpdate/validateDelete(): nothing to serve",
      );
    }
    if (problems.length > 0 || !this.kind) throw new BuilderError(plugin, problems);
    const kind = this.kind;
    return {
      type: "admission",
      for: kind,
      ...(methods.defaults ? { mutatingPath: admissionWebhookPath("mutate", kind) } : {}),
      ...(methods.operations.length > 0 ? { validatingPath: admissionWebhookPath("validate", kind) } : {}),
      operations: methods.operations,
      failurePolicy: this.options.failurePolicy ?? "Fail",
      timeoutSeconds: this.options.timeoutSeconds ?? 10,
    };
  }
}
