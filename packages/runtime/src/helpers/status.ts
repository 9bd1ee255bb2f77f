import type { KubeObject, Resource, ApplyOptions, Client } from "@tessera/client";

/** Whether every field `desired` sets has the same value in `current` (arrays compared whole). */
export function containsFields(current: unknown, desired: unknown): boolean {
  if (desired === null || typeof desired !== "object") return Object.is(current, desired);
  if (Array.isArray(desired)) {
    return (
      Array.isArray(current) &&
      current.length === desired.length &&
      desired.every((d, i) => containsFields(current[i], d) && containsFields(d, current[i]))
    );
  }
  if (current === null || typeof current !== "object" || Array.isArray(current)) return false;
  return Object.entries(desired).every(
    ([k, v]) => v === undefined || containsFields((current as Record<string, unknown>)[k], v),
  );
}

/**
 * Server-side applies `status` to the status subresource of `current`, unless
 * `current.status` already holds every field of it: a reconcile that finds
 * nothing new makes no write (no request, no resourceVersion churn, no
 * watch event for every other watcher). Resolves with the object and whether
 * it was written.
 *
 * ```ts
 * const { conditions } = setCondition(widget.status?.conditions, ready, clock.wallTime());
 * await applyStatusIfChanged(client, Widgets, widget, { conditions, observedGeneration });
 * ```
 */
export async function applyStatusIfChanged<T extends KubeObject & { status?: unknown }>(
  client: Client,
  resource: Resource<T>,
  current: T,
  status: NonNullable<T["status"]>,
  options: ApplyOptions = {},
): Promise<{ object: T; written: boolean }> {
  if (containsFields(current.status, status)) return { object: current, written: false };
  const meta = current.metadata ?? {};
  const object = await client.applyStatus(
    resource,
    {
      metadata: { name: meta.name ?? "", ...(meta.namespace ? { namespace: meta.namespace } : {}) },
      status,
    } as unknown as Parameters<Client["applyStatus"]>[1] & T,
    options,
  );
  return { object, written: true };
}
