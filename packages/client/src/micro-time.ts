import { isoTime } from "@tessera/core";
/**
 * A `MicroTime` as the API server takes it (Lease `renewTime`, Event
 * `eventTime`): RFC 3339 in UTC with exactly six fractional digits.
 */
export function formatMicroTime(date: Date): string {
  return isoTime(date).replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** A `Time` or `MicroTime` the server sent, as a Date; `undefined` when absent or unreadable. */
export function parseKubeTime(value: string | Date | null | undefined): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A `Time` as the API server stores it (a condition's `lastTransitionTime`, an Event's `lastTimestamp`): RFC 3339 in UTC, whole seconds. */
export function formatKubeTime(date: Date): string {
  return isoTime(date).replace(/\.\d{3}Z$/, "Z");
}
