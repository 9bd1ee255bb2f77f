/** A short printable form of a queue item for log lines and error messages. */
export function describeItem(item: unknown): string {
  if (typeof item === "string") return item;
  if (typeof item === "number" || typeof item === "bigint" || typeof item === "boolean") return String(item);
  try {
    const json = JSON.stringify(item);
    if (json !== undefined) return json.length > 200 ? `${json.slice(0, 200)}...` : json;
  } catch {
    // Cyclic or otherwise unserialisable: fall through.
  }
  return String(item);
}
