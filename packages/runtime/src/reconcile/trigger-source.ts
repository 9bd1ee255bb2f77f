import { toError, type Logger } from "@tessera/core";
import type { Request } from "./request.js";

/** An event emitter of requests (Node's `EventEmitter`, or anything with `on` and `off`). */
export interface RequestEmitter {
  on(event: string, listener: (request: Request) => void): unknown;
  off(event: string, listener: (request: Request) => void): unknown;
}

/**
 * Where requests come from besides the watched kinds (controller-runtime's
 * `source.Channel`, kube-rs's `reconcile_on`): a timer, a webhook from
 * another system, a queue. An async iterable is read until it ends; an
 * event emitter is listened to on its `"request"` event (or the event named
 * in {@link TriggerOptions.event}).
 */
export type TriggerSource = AsyncIterable<Request> | RequestEmitter;

/** Options of `triggers(source, options)`. */
export interface TriggerOptions {
  /** The event of an emitter source that carries a request. Default `"request"`. */
  event?: string;
}

/** A trigger source as the builder keeps it. */
export interface TriggerDeclaration {
  readonly source: TriggerSource;
  readonly event: string;
}

/** Whether `source` is a {@link TriggerSource}, for the builder's check. */
export function isTriggerSource(source: unknown): source is TriggerSource {
  if (source === null || typeof source !== "object") return false;
  if (typeof (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === "function") return true;
  const emitter = source as Partial<RequestEmitter>;
  return typeof emitter.on === "function" && typeof emitter.off === "function";
}

/** What is wrong with `value` as a request, or undefined when it is one. */
export function requestProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return `not a request: ${String(value)}`;
  const { namespace, name } = value as Partial<Request>;
  if (typeof name !== "string" || name === "") return `a request needs a name, got ${JSON.stringify(value)}`;
  if (namespace !== undefined && typeof namespace !== "string")
    return `a request's namespace must be a string ("" for a cluster-scoped kind), got ${JSON.stringify(value)}`;
  return undefined;
}

/**
 * Reads `trigger` until `signal` aborts (or an iterable ends), handing each
 * request to `onRequest`. A value that is no request is logged and
 * skipped; an iterable that throws is logged and read no more (the
 * controller goes on with its other sources), unless it throws an
 * `AbortError` (a timer stopped by its own signal: the source has ended).
 * Resolves when done.
 */
export async function consumeTrigger(
  trigger: TriggerDeclaration,
  onRequest: (request: Request) => void,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  if (signal.aborted) return;
  const take = (value: unknown): void => {
    const problem = requestProblem(value);
    if (problem) logger.error(`trigger source: ${problem}; the value is skipped`);
    else onRequest(value as Request);
  };
  const source = trigger.source;
  if (!(Symbol.asyncIterator in source)) {
    source.on(trigger.event, take);
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    source.off(trigger.event, take);
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  const aborted = new Promise<"aborted">((resolve) =>
    signal.addEventListener("abort", () => resolve("aborted"), { once: true }),
  );
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === "aborted" || next.done) break;
      take(next.value);
    }
  } catch (error) {
    // A source aborted by its own signal (a timer's) has ended; anything else is a failure.
    if (toError(error).name !== "AbortError")
      logger.error("trigger source failed; it is read no more", { error: toError(error).message });
    return;
  }
  // An iterator stopped early is told so (a generator's finally runs), without waiting for it.
  if (signal.aborted) void Promise.resolve(iterator.return?.()).catch(() => undefined);
}
