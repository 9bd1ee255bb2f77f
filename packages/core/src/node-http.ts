import { createRequire } from "node:module";

/**
 * `node:http`, loaded as CommonJS rather than imported as an ES module.
 *
 * Why: an ES import of `node:http` builds the module's namespace from every
 * export, and reading its lazy ones (`WebSocket`, `CloseEvent`, ...) loads
 * undici, http2, perf_hooks and worker_threads. That costs an idle operator
 * about 12 MiB of RSS for code it never runs (docs/benchmarks.md, "Idle
 * RSS"). `require` returns the same module object without reading them.
 * Type-only imports of `node:http` are erased and need no such care.
 */
export const nodeHttp = createRequire(import.meta.url)("node:http") as typeof import("node:http");
