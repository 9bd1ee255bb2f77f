import { ApiError, type ApiErrorContext } from "@tessera/client";

/**
 * The error of a cached read by an index the kind's cache does not keep
 * (`list(kind, { index })`, or `fields` on a path no index is named for):
 * the manager's cached client and the `FakeClient` of
 * `@tessera/runtime/testing` fail with this one.
 */
export function indexNotDeclared(context: ApiErrorContext, name: string): ApiError {
  return new ApiError(
    context,
    0,
    "IndexNotDeclared",
    `no index "${name}" on the cache of ${context.resource}, and the cache does not scan: declare it where the kind is declared, e.g. owns(kind, { indexes: { "${name}": (o) => [/* the value of ${name} */] } }), or list with Tokens.ApiReader (the server filters by field selectors)`,
  );
}
