import type { ApiErrorContext, Resource } from "@tessera/client";

/** The client methods a {@link FakeClient} serves, as an interceptor names them. */
export type FakeVerb =
  "get" | "list" | "create" | "update" | "patch" | "apply" | "delete" | "updateStatus" | "applyStatus";

/** One call to the fake, as an interceptor sees it. */
export interface InterceptedCall {
  readonly verb: FakeVerb;
  readonly resource: Resource;
  readonly namespace: string | undefined;
  /** The object's name; absent for `list` (and a `create` with `generateName`). */
  readonly name: string | undefined;
  /** The arguments after the resource handle, as the caller passed them. */
  readonly args: readonly unknown[];
  /** What an `ApiError` of this call names, for `serverErrors.*(call.context, ...)`. */
  readonly context: ApiErrorContext;
}

/** Which calls an interceptor takes: every field given must match. */
export interface InterceptMatch {
  verb?: FakeVerb | readonly FakeVerb[];
  /** Matched by group, version and plural. */
  resource?: Resource;
  namespace?: string;
  name?: string;
  /** How many calls it takes before it retires; default: every call. */
  times?: number;
}

/**
 * Takes a call in place of the fake: throw to fail it, `await` something
 * (a fake clock's timer) then `return next()` to delay it, or return a value
 * to answer for the store. `next()` runs the remaining interceptors, then the store.
 */
export type Interceptor = (call: InterceptedCall, next: () => Promise<unknown>) => unknown;

/** An installed interceptor: how many calls it has taken; `remove()` uninstalls it. */
export interface Interception {
  readonly calls: number;
  remove(): void;
}

/** The interceptors of one fake, in the order they were installed. */
export class InterceptorChain {
  private readonly installed: { match: InterceptMatch; handler: Interceptor; calls: number }[] = [];

  add(match: InterceptMatch, handler: Interceptor): Interception {
    const entry = { match, handler, calls: 0 };
    this.installed.push(entry);
    const list = this.installed;
    return {
      get calls() {
        return entry.calls;
      },
      remove() {
        const i = list.indexOf(entry);
        if (i >= 0) list.splice(i, 1);
      },
    };
  }

  /** Runs `call` through the interceptors that match it, then `serve`. */
  run<R>(call: InterceptedCall, serve: () => Promise<R>): Promise<R> {
    const matching = this.installed.filter((e) => matches(e.match, call) && !retired(e));
    const step = async (i: number): Promise<unknown> => {
      const entry = matching[i];
      if (!entry) return serve();
      // Checked again: an earlier interceptor of this call may have used up a shared budget.
      if (retired(entry)) return step(i + 1);
      entry.calls++;
      return entry.handler(call, () => step(i + 1));
    };
    return step(0) as Promise<R>;
  }
}

const retired = (e: { match: InterceptMatch; calls: number }): boolean =>
  e.match.times !== undefined && e.calls >= e.match.times;

function matches(match: InterceptMatch, call: InterceptedCall): boolean {
  if (match.verb !== undefined) {
    const verbs: readonly FakeVerb[] = typeof match.verb === "string" ? [match.verb] : match.verb;
    if (!verbs.includes(call.verb)) return false;
  }
  if (match.resource) {
    const r = match.resource;
    if (r.group !== call.resource.group || r.version !== call.resource.version) return false;
    if (r.plural !== call.resource.plural) return false;
  }
  if (match.namespace !== undefined && match.namespace !== call.namespace) return false;
  if (match.name !== undefined && match.name !== call.name) return false;
  return true;
}
