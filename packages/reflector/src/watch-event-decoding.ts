import type { Status } from "@tessera/client";
import { ApiStatusError, StreamDecodeError, type ListWatchErrorContext } from "./list-watch-error.js";
import { statusReasonForHttpCode } from "@tessera/client";
import type { WatchEvent, WatchEventType } from "./watch-event.js";

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>([
  "ADDED",
  "MODIFIED",
  "DELETED",
  "BOOKMARK",
]);

/**
 * Checks one decoded watch line (JSON, or a protobuf frame shaped as JSON)
 * and returns it as an event. Kept apart from the HTTP code so the shape
 * checks can be exercised on arbitrary values without a server.
 *
 * @throws ApiStatusError for an ERROR event, carrying its Status as far as it is one
 * @throws StreamDecodeError for anything that is not an event of a known type with an object
 */
export function toWatchEvent<T>(value: unknown, context: ListWatchErrorContext): WatchEvent<T> {
  const event = value as { type?: unknown; object?: unknown } | null;
  if (event === null || typeof event !== "object" || typeof event.type !== "string") {
    throw new StreamDecodeError(context, "a watch line is not an event", excerpt(value));
  }
  // An array is JSON's other "object": refused here, not left to fail as a keyless object downstream.
  if (typeof event.object !== "object" || event.object === null || Array.isArray(event.object)) {
    throw new StreamDecodeError(context, `a ${event.type} event carries no object`, excerpt(value));
  }
  if (event.type === "ERROR") {
    // The Status is the server's (or a proxy's) say: take its fields only where they have their types,
    // so the error's code is an HTTP code and its reason and message are strings.
    const status = event.object as { [K in keyof Status]?: unknown };
    const code =
      Number.isSafeInteger(status.code) && (status.code as number) > 0 ? (status.code as number) : 500;
    throw new ApiStatusError(
      context,
      code,
      typeof status.reason === "string" && status.reason !== ""
        ? status.reason
        : statusReasonForHttpCode(code),
      typeof status.message === "string" && status.message !== ""
        ? status.message
        : "the watch ended with an ERROR event",
      status as Status,
      "event",
    );
  }
  if (!EVENT_TYPES.has(event.type)) {
    throw new StreamDecodeError(context, `unknown watch event type "${event.type}"`, excerpt(value));
  }
  return event as WatchEvent<T>;
}

function excerpt(value: unknown): string {
  return JSON.stringify(value)?.slice(0, 200) ?? String(value);
}
