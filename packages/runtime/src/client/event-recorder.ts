import type { KubeObject } from "@tessera/client";

/** Normal for what went as expected; Warning for what an operator should look at. */
export type EventType = "Normal" | "Warning";

/** One Kubernetes Event about an object. */
export interface EventInput {
  type: EventType;
  /** UpperCamelCase, machine-readable: `Created`, `FailedApply`. */
  reason: string;
  /** What the controller did or failed to do: `Create`, `Apply`, `Delete`. */
  action: string;
  /** Human-readable, at most 1 kB. */
  note: string;
  /** A second object involved (the ConfigMap a Widget created). */
  related?: KubeObject;
}

/**
 * Records Events about objects (events.k8s.io/v1, `regarding` the object),
 * with the manager's name as the reporting controller and its identity as
 * the reporting instance. Recording never throws: a failed write is logged.
 */
export interface EventRecorder {
  record(regarding: KubeObject, event: EventInput): void;
}
