import { createRequire } from "node:module";

/** The built-in modules {@link nodeBuiltin} loads, by name. */
export interface NodeBuiltins {
  "node:fs": typeof import("node:fs");
  "node:http": typeof import("node:http");
  "node:zlib": typeof import("node:zlib");
}

const requireBuiltin = createRequire(import.meta.url);

/**
 * A built-in module, loaded as CommonJS rather than imported as an ES module.
 *
 * Why: an ES import of a built-in builds the module's namespace from every
 * export, which reads its lazy ones. For `node:http` (`WebSocket`,
 * `CloseEvent`, ...) that loads undici, http2, perf_hooks and worker_threads;
 * for `node:fs` (`promises`, `Utf8Stream`, `ReadStream`, ...) fs/promises,
 * readline and the stream classes. An idle operator keeps that memory for
 * code it never runs (docs/benchmarks.md, "Idle RSS"). `require` returns the
 * same module object without reading them. Call it where the module is first
 * needed to load one an operator may never use (`node:zlib`) only then.
 * Type-only imports of built-ins are erased and need no such care.
 */
export function nodeBuiltin<K extends keyof NodeBuiltins>(name: K): NodeBuiltins[K] {
  return requireBuiltin(name) as NodeBuiltins[K];
}

/** `node:http`, through {@link nodeBuiltin}. */
export const nodeHttp = nodeBuiltin("node:http");

/** `node:fs`, through {@link nodeBuiltin}. */
export const nodeFs = nodeBuiltin("node:fs");
