import type { KubeObject, ObjectList } from "@tessera/client";
import { StreamDecodeError, type ListWatchErrorContext } from "./list-watch-error.js";

/**
 * Parses the JSON body of a LIST response into a page. Kept apart from the
 * HTTP code so the checks can be exercised on arbitrary bytes without a server.
 * A `null` items array (as some servers send for an empty list) becomes `[]`.
 *
 * @throws StreamDecodeError when the body is not JSON or has no items array
 */
export function decodeListBody<T extends KubeObject>(
  body: Buffer,
  context: ListWatchErrorContext,
): ObjectList<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new StreamDecodeError(context, "the list response is not JSON", body.toString("utf8", 0, 200), err);
  }
  const list = parsed as ObjectList<T> | null;
  if (list === null || typeof list !== "object" || !(Array.isArray(list.items) || list.items === null)) {
    throw new StreamDecodeError(
      context,
      "the list response has no items array",
      body.toString("utf8", 0, 200),
    );
  }
  if (list.items === null) list.items = [];
  return list;
}
