// The example operator of the runtime's integration tests: a custom resource
// Widget that owns a ConfigMap holding its spec.data, with status.observedGeneration.
import { sleep, type Clock } from "@tessera/core";
import { ConfigMaps, defineResource, type KubeObject } from "@tessera/client";
import { generationChanged } from "../../src/predicates.js";
import {
  Tokens,
  token,
  type Client,
  type ControllerBuilder,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
} from "../../src/index.js";
import { requestKey } from "../../src/controller.js";

export interface Widget extends KubeObject {
  metadata?: KubeObject["metadata"] & { generation?: number };
  spec?: { data?: Record<string, string>; delayMs?: number };
  status?: { observedGeneration?: number };
}

export const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

/** The Widget CRD: status as a subresource, so status writes do not bump the generation. */
export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  data: { type: "object", additionalProperties: { type: "string" } },
                  delayMs: { type: "integer" },
                },
              },
              status: { type: "object", properties: { observedGeneration: { type: "integer" } } },
            },
          },
        },
      },
    ],
  },
};

/** What a reconcile saw, for the tests' ledgers. */
export interface ReconcileRecord {
  key: string;
  generation: number | undefined;
  /** Start and end, in microseconds of the machine's monotonic clock (comparable across processes). */
  start: number;
  end: number;
  found: boolean;
  /** The error the reconcile ended with, if it failed. */
  error?: string;
}

/** Where the reconciler reports: when a reconcile starts, and what it did once it ends. */
export interface LedgerSink {
  started(key: string, at: number): void;
  finished(record: ReconcileRecord): void;
}
export const LedgerToken = token<LedgerSink>("widget.LedgerSink");

export const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Keeps a ConfigMap named after each Widget with the Widget's `spec.data`,
 * owned by it (server-side apply), then records the generation it acted on in
 * `status.observedGeneration`. `spec.delayMs` makes a reconcile slow.
 */
export class WidgetReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client, Tokens.Clock, LedgerToken] as const;

  constructor(
    private readonly client: Client,
    private readonly clock: Clock,
    private readonly ledger: LedgerSink,
  ) {}

  controller(on: ControllerBuilder) {
    return on
      .for(Widgets, { predicates: [generationChanged()] })
      .owns(ConfigMaps)
      .withOptions({ concurrency: 8 });
  }

  async reconcile(request: Request, ctx: ReconcileContext<Widget>): Promise<void> {
    const start = nowMicros();
    this.ledger.started(requestKey(request), start);
    const widget = ctx.current();
    let failure: string | undefined;
    try {
      if (!widget?.metadata?.uid) return;
      if (widget.spec?.delayMs) await sleep(this.clock, widget.spec.delayMs, ctx.signal);
      await this.client.apply(
        ConfigMaps,
        {
          metadata: {
            name: request.name,
            namespace: request.namespace,
            ownerReferences: [
              {
                apiVersion: Widgets.apiVersion,
                kind: Widgets.kind,
                name: request.name,
                uid: widget.metadata.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          data: widget.spec?.data ?? {},
        },
        { signal: ctx.signal, force: true },
      );
      const generation = widget.metadata.generation;
      if (widget.status?.observedGeneration !== generation) {
        await this.client.applyStatus(
          Widgets,
          {
            metadata: { name: request.name, namespace: request.namespace },
            status: { observedGeneration: generation },
          },
          { signal: ctx.signal, force: true },
        );
      }
    } catch (error) {
      failure = String(error);
      throw error;
    } finally {
      this.ledger.finished({
        key: requestKey(request),
        generation: widget?.metadata?.generation,
        start,
        end: nowMicros(),
        found: widget !== undefined,
        ...(failure !== undefined ? { error: failure } : {}),
      });
    }
  }
}
