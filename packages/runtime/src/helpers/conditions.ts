import { formatKubeTime } from "@tessera/client";

/** A status condition with the semantics of Kubernetes' `metav1.Condition`. */
export interface Condition {
  /** CamelCase, e.g. `Ready`, `Valid`; one entry per type. */
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  /** The `metadata.generation` the condition was set from. */
  readonly observedGeneration?: number;
  /** When `status` last changed (RFC 3339, seconds), not when the condition was last written. */
  readonly lastTransitionTime: string;
  /** CamelCase, machine-readable: why the condition is in this status. */
  readonly reason: string;
  /** Human-readable detail; may be empty. */
  readonly message: string;
}

/** What {@link setCondition} takes: a condition without its transition time. */
export interface ConditionInput {
  readonly type: string;
  readonly status: Condition["status"];
  readonly reason: string;
  readonly message?: string;
  readonly observedGeneration?: number;
}

/** The conditions after {@link setCondition}, and whether anything changed (write the status only then). */
export interface ConditionsUpdate {
  readonly conditions: Condition[];
  readonly changed: boolean;
}

// The API server's validation of metav1.Condition.
const TYPE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_MESSAGE = 32_768;

/**
 * Sets one condition the way apimachinery's `meta.SetStatusCondition` does:
 * `lastTransitionTime` becomes `now` only when the condition is new or its
 * status changed; reason, message and observedGeneration are updated in
 * place. Returns a new array, sorted by type, and whether anything changed,
 * so a reconciler skips the status write when nothing did. Throws a
 * TypeError for a type, reason or message the API server would refuse.
 *
 * ```ts
 * const { conditions, changed } = setCondition(widget.status?.conditions, {
 *   type: "Ready", status: "True", reason: "Applied", observedGeneration: widget.metadata?.generation,
 * }, clock.wallTime());
 * if (changed) await client.applyStatus(Widgets, { metadata, status: { conditions } });
 * ```
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): ConditionsUpdate {
  checkCondition(input);
  const list = [...(conditions ?? [])];
  const message = input.message ?? "";
  const index = list.findIndex((c) => c.type === input.type);
  const existing = index >= 0 ? list[index] : undefined;
  let next: Condition;
  if (existing === undefined) {
    next = {
      type: input.type,
      status: input.status,
      ...(input.observedGeneration !== undefined ? { observedGeneration: input.observedGeneration } : {}),
      lastTransitionTime: formatKubeTime(now),
      reason: input.reason,
      message,
    };
  } else {
    const statusChanged = existing.status !== input.status;
    const observedGeneration = input.observedGeneration ?? existing.observedGeneration;
    if (
      !statusChanged &&
      existing.reason === input.reason &&
      existing.message === message &&
      existing.observedGeneration === observedGeneration
    ) {
      return { conditions: sortByType(list), changed: false };
    }
    next = {
      type: input.type,
      status: input.status,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
      lastTransitionTime: statusChanged ? formatKubeTime(now) : existing.lastTransitionTime,
      reason: input.reason,
      message,
    };
  }
  if (index >= 0) list[index] = next;
  else list.push(next);
  return { conditions: sortByType(list), changed: true };
}

/** Removes the condition of `type`; `changed` says whether there was one. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): ConditionsUpdate {
  const list = (conditions ?? []).filter((c) => c.type !== type);
  return { conditions: sortByType(list), changed: list.length !== (conditions ?? []).length };
}

/** The condition of `type`, if set. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of `type` is set and `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** Whether the condition of `type` is set and `False`. */
export function isConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "False";
}

function sortByType(list: Condition[]): Condition[] {
  return list.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

function checkCondition(input: ConditionInput): void {
  const problems: string[] = [];
  if (!TYPE.test(input.type) || input.type.length > 316) {
    problems.push(
      `type ${JSON.stringify(input.type)} is not a CamelCase name (optionally prefixed by a DNS subdomain and "/")`,
    );
  }
  if (!["True", "False", "Unknown"].includes(input.status)) {
    problems.push(`status ${JSON.stringify(input.status)} is not "True", "False" or "Unknown"`);
  }
  if (!REASON.test(input.reason) || input.reason.length > 1024) {
    problems.push(
      `reason ${JSON.stringify(input.reason)} is not CamelCase (letters, digits, "_", "," or ":", starting with a letter)`,
    );
  }
  if ((input.message ?? "").length > MAX_MESSAGE)
    problems.push(`message is longer than ${MAX_MESSAGE} characters`);
  if (
    input.observedGeneration !== undefined &&
    !(Number.isInteger(input.observedGeneration) && input.observedGeneration >= 0)
  ) {
    problems.push(`observedGeneration ${input.observedGeneration} is not a non-negative integer`);
  }
  if (problems.length > 0) {
    throw new TypeError(
      `condition ${JSON.stringify(input.type)}: ${problems.join("; ")}; the API server would refuse it`,
    );
  }
}
