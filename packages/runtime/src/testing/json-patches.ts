import type { JsonPatchOperation } from "@tessera/client";

/** A JSON value as the fake stores it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Why a patch could not apply: the fake turns it into the server's error. */
export class PatchError extends Error {
  override name = "PatchError";
}

const isMap = (v: unknown): v is Record<string, Json> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** RFC 7386 JSON merge patch: maps merge, `null` removes a key, anything else (arrays included) replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isMap(patch)) return patch;
  const out: Record<string, Json> = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** Structural equality of JSON values (key order ignored), as the server compares objects. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (!isMap(a) || !isMap(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  const other = Object.keys(b).filter((k) => b[k] !== undefined);
  return keys.length === other.length && keys.every((k) => jsonEqual(a[k], b[k]));
}

/** A deep copy through JSON, which is what the server stores (so `Date`s become strings). */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new PatchError(`JSON pointer "${pointer}" must start with "/"`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The parent container of `pointer` and the last token, or a PatchError naming the missing part. */
function locate(doc: Json, pointer: string): { parent: Json; key: string } {
  const parts = tokens(pointer);
  const key = parts.pop();
  if (key === undefined) throw new PatchError(`cannot operate on the whole document at "${pointer}"`);
  let at: Json = doc;
  for (const part of parts) {
    const next: Json | undefined = Array.isArray(at) ? at[Number(part)] : isMap(at) ? at[part] : undefined;
    if (next === undefined) throw new PatchError(`doc is missing path: "${pointer}": missing value`);
    at = next;
  }
  return { parent: at, key };
}

function read(doc: Json, pointer: string): Json | undefined {
  let at: Json | undefined = doc;
  for (const part of tokens(pointer)) {
    at = Array.isArray(at) ? at[Number(part)] : isMap(at) ? at[part] : undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

function add(doc: Json, pointer: string, value: Json, replace: boolean): void {
  const { parent, key } = locate(doc, pointer);
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length - (replace ? 1 : 0)) {
      throw new PatchError(`index out of bounds at "${pointer}"`);
    }
    if (replace) parent[index] = value;
    else parent.splice(index, 0, value);
  } else if (isMap(parent)) {
    if (replace && !(key in parent)) {
      throw new PatchError(`replace operation does not apply: doc is missing key: ${pointer}: missing value`);
    }
    parent[key] = value;
  } else {
    throw new PatchError(`doc is missing path: "${pointer}": missing value`);
  }
}

function remove(doc: Json, pointer: string): Json {
  const { parent, key } = locate(doc, pointer);
  if (Array.isArray(parent)) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) {
      throw new PatchError(`index out of bounds at "${pointer}"`);
    }
    return parent.splice(index, 1)[0] as Json;
  }
  if (isMap(parent) && key in parent) {
    const value = parent[key] as Json;
    delete parent[key];
    return value;
  }
  throw new PatchError(`remove operation does not apply: doc is missing path: "${pointer}": missing value`);
}

/** RFC 6902 JSON patch on a copy of `doc`; a failing operation (a `test` included) throws a {@link PatchError}. */
export function jsonPatch(doc: Json, operations: readonly JsonPatchOperation[]): Json {
  const out = jsonCopy(doc);
  for (const op of operations) {
    switch (op.op) {
      case "add":
      case "replace":
        add(out, op.path, jsonCopy(op.value) as Json, op.op === "replace");
        break;
      case "remove":
        remove(out, op.path);
        break;
      case "test":
        // As the API server's JSON patch: a member that is absent tests equal to null.
        if (!jsonEqual(read(out, op.path) ?? null, op.value)) {
          throw new PatchError(`testing value ${op.path} failed: test failed`);
        }
        break;
      case "move":
        add(out, op.path, remove(out, op.from), false);
        break;
      case "copy": {
        const value = read(out, op.from);
        if (value === undefined)
          throw new PatchError(`copy operation does not apply: doc is missing from path: ${op.from}`);
        add(out, op.path, jsonCopy(value), false);
        break;
      }
    }
  }
  return out;
}
