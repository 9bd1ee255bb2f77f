/**
 * `value` with a Kubernetes Secret's `data` and `stringData` replaced by
 * `"[redacted <n> keys]"` when it is one (`kind: Secret`, or a list item
 * without `kind` that has a Secret's `type` and `metadata`); anything else is
 * returned as it is. Shallow: a JSON.stringify replacer calls it on every
 * node, which is how {@link JsonLogger} keeps Secret values out of logs
 * however deep the Secret sits (an error's field, a `cause`, a list).
 */
export function redactSecret<T>(value: T): T {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  if (!isSecretShaped(object)) return value;
  const out: Record<string, unknown> = { ...object };
  for (const field of ["data", "stringData"]) {
    const held = object[field];
    if (held !== null && typeof held === "object") out[field] = `[redacted ${Object.keys(held).length} keys]`;
    else if (held !== undefined) out[field] = "[redacted]";
  }
  return out as T;
}

function isSecretShaped(object: Record<string, unknown>): boolean {
  if (object["data"] === undefined && object["stringData"] === undefined) return false;
  if (object["kind"] === "Secret") return true;
  // A list's items carry no kind; a Secret's `type` (always set by the API server) tells it from a ConfigMap.
  return (
    object["kind"] === undefined &&
    typeof object["type"] === "string" &&
    object["metadata"] !== null &&
    typeof object["metadata"] === "object"
  );
}
