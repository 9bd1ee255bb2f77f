/**
 * How a Go API type's JSON follows from its protobuf message, as the tool
 * in `tools/proto` reads it from the Go types by reflection (`proto/shapes.json`):
 * per protobuf message, its fields in Go order.
 */
export interface MessageShapes {
  readonly messages: Readonly<Record<string, readonly FieldShape[]>>;
  /** apiVersion -> kind -> message, for what an envelope's TypeMeta names. */
  readonly kinds: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** One protobuf field and its JSON form. */
export interface FieldShape {
  /** The protobuf field name. */
  readonly p: string;
  /** The JSON name ("" when inlined). */
  readonly j: string;
  /** `omitempty`: left out when false, 0, "", or a nil or empty slice or map. */
  readonly oe?: boolean;
  /** `omitzero`: left out when its Go value is zero (for a struct too). */
  readonly oz?: boolean;
  /** A Go pointer: absent on the wire is nil; present is kept even when zero. */
  readonly ptr?: boolean;
  /** An embedded struct whose fields JSON lifts into the parent. */
  readonly in?: boolean;
  readonly t: TypeShape;
}

/** A Go type as the conversion needs it. */
export interface TypeShape {
  /**
   * string, bool, int, float, bytes, message, slice, map, or a type that
   * marshals itself: time, microtime, duration, quantity, intorstring,
   * rawextension, fieldsv1.
   */
  readonly k: string;
  /** The message of a `message`. */
  readonly m?: string;
  /** The element of a `slice`, the value of a `map`. */
  readonly e?: TypeShape;
}

/** A message as protobufjs decodes it: the fields on the wire are its own properties. */
export type Decoded = Record<string, unknown>;
const has = (message: Decoded, field: string) => Object.prototype.hasOwnProperty.call(message, field);

/**
 * Turns a message decoded by protobufjs (only the fields on the wire are its
 * own properties) into the plain JSON the API server would have sent for
 * the same object: what `json.Marshal` makes of the Go value that
 * `proto.Unmarshal` makes of the bytes. Field names, omitempty and omitzero,
 * nil against zero, inlined structs, dates as RFC 3339 strings,
 * int-or-string, quantities, durations, bytes as base64, embedded raw JSON.
 */
export function toJsonShape(
  shapes: MessageShapes,
  messageName: string,
  message: Decoded,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  writeFields(shapes, messageName, message, out);
  return out;
}

function writeFields(
  shapes: MessageShapes,
  messageName: string,
  message: Decoded,
  out: Record<string, unknown>,
): void {
  const fields = shapes.messages[messageName];
  if (!fields) throw new TypeError(`no JSON shape for protobuf message ${messageName}`);
  for (const field of fields) {
    const present = has(message, field.p);
    const raw = present ? message[field.p] : undefined;
    if (field.in) {
      // Embedded: its JSON fields are the parent's. A nil embedded pointer adds nothing.
      if (field.ptr && !present) continue;
      writeFields(shapes, field.t.m ?? "", (raw as Decoded | undefined) ?? {}, out);
      continue;
    }
    if (field.ptr && !present) {
      if (!field.oe && !field.oz) out[field.j] = null;
      continue;
    }
    const { value, empty, zero } = convert(shapes, field.t, raw, present);
    if (field.oz && zero && !(field.ptr && present)) continue;
    if (field.oe && empty && !(field.ptr && present && !isCollection(field.t))) continue;
    out[field.j] = value;
  }
}

const isCollection = (t: TypeShape) => t.k === "slice" || t.k === "map" || t.k === "bytes";

interface Converted {
  value: unknown;
  /** What omitempty leaves out: false, 0, "", nil or empty slices and maps (never a struct). */
  empty: boolean;
  /** What omitzero leaves out: the Go zero value. */
  zero: boolean;
}

function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (v && typeof (v as { toNumber?: unknown }).toNumber === "function")
    return (v as { toNumber(): number }).toNumber();
  return Number(v ?? 0);
}

function convert(shapes: MessageShapes, t: TypeShape, raw: unknown, present: boolean): Converted {
  switch (t.k) {
    case "string": {
      const s = present ? String(raw) : "";
      return { value: s, empty: s === "", zero: s === "" };
    }
    case "bool": {
      const b = present ? Boolean(raw) : false;
      return { value: b, empty: !b, zero: !b };
    }
    case "int":
    case "float": {
      const n = present ? toNumber(raw) : 0;
      return { value: n, empty: n === 0, zero: n === 0 };
    }
    case "bytes": {
      if (!present) return { value: null, empty: true, zero: true };
      const bytes = raw as Uint8Array;
      return { value: Buffer.from(bytes).toString("base64"), empty: bytes.length === 0, zero: false };
    }
    case "slice": {
      // Empty and absent are one on the wire, and a nil slice after decoding.
      if (!present || (raw as unknown[]).length === 0) return { value: null, empty: true, zero: true };
      const items = (raw as unknown[]).map((item) => convert(shapes, t.e!, item, true).value);
      return { value: items, empty: items.length === 0, zero: false };
    }
    case "map": {
      if (!present || Object.keys(raw as object).length === 0)
        return { value: null, empty: true, zero: true };
      const entries = Object.entries(raw as Record<string, unknown>).map(
        ([k, v]) => [k, convert(shapes, t.e!, v, true).value] as const,
      );
      return { value: Object.fromEntries(entries), empty: entries.length === 0, zero: false };
    }
    case "message": {
      const m = (present ? raw : {}) as Decoded;
      const value = toJsonShape(shapes, t.m!, m);
      return { value, empty: false, zero: !present || isZeroMessage(m) };
    }
    case "time":
    case "microtime": {
      const m = (present ? raw : {}) as Decoded;
      const seconds = toNumber(m["seconds"]);
      const nanos = toNumber(m["nanos"]);
      // Go's zero time (year 1) marshals as null; the wire leaves it empty, or carries year 1's seconds.
      const isZero = !present || (nanos === 0 && (!has(m, "seconds") || seconds === GO_ZERO_TIME_UNIX));
      if (isZero) return { value: null, empty: false, zero: true };
      return { value: formatTime(seconds, nanos, t.k === "microtime"), empty: false, zero: false };
    }
    case "duration": {
      const m = (present ? raw : {}) as Decoded;
      const nanos = toNumber(m["duration"]);
      return { value: formatGoDuration(nanos), empty: false, zero: nanos === 0 };
    }
    case "quantity": {
      const m = (present ? raw : {}) as Decoded;
      const s = has(m, "string") ? String(m["string"]) : "0";
      return { value: s, empty: false, zero: !present };
    }
    case "intorstring": {
      const m = (present ? raw : {}) as Decoded;
      const isString = toNumber(m["type"]) === 1;
      const value = isString ? (typeof m["strVal"] === "string" ? m["strVal"] : "") : toNumber(m["intVal"]);
      return { value, empty: false, zero: !present || (!isString && value === 0) };
    }
    case "rawextension":
    case "fieldsv1": {
      const m = (present ? raw : {}) as Decoded;
      const bytes = (m["raw"] ?? m["Raw"]) as Uint8Array | undefined;
      if (!bytes || bytes.length === 0) return { value: null, empty: false, zero: true };
      return { value: JSON.parse(Buffer.from(bytes).toString("utf8")) as unknown, empty: false, zero: false };
    }
    default:
      throw new TypeError(`unknown Go type kind ${t.k}`);
  }
}

/** `time.Time{}.Unix()`: January 1 of year 1, UTC. */
const GO_ZERO_TIME_UNIX = -62135596800;

/**
 * Whether a decoded message is a Go zero value: every field it carries is
 * zero too (non-pointer fields are on the wire even when zero).
 */
function isZeroMessage(m: Decoded): boolean {
  return Object.values(m).every(isZeroValue);
}

function isZeroValue(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0 || v === false) return true;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") {
    if (typeof (v as { toNumber?: unknown }).toNumber === "function") return toNumber(v) === 0;
    return isZeroMessage(v as Decoded);
  }
  return false;
}

/** RFC 3339 in UTC: whole seconds for Time, six digits of fraction for MicroTime (as Go's metav1 marshals them). */
function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z`;
}

/** Go's time.Duration.String(): "1h2m3.5s", "150ms", "0s". */
export function formatGoDuration(nanos: number): string {
  if (nanos === 0) return "0s";
  const sign = nanos < 0 ? "-" : "";
  let n = Math.abs(nanos);
  if (n < 1e9) {
    const [unit, size] = n < 1e3 ? ["ns", 1] : n < 1e6 ? ["µs", 1e3] : ["ms", 1e6];
    return `${sign}${trimFraction(n / size)}${unit}`;
  }
  const hours = Math.floor(n / 3.6e12);
  n -= hours * 3.6e12;
  const minutes = Math.floor(n / 6e10);
  n -= minutes * 6e10;
  const seconds = trimFraction(n / 1e9);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

const trimFraction = (v: number) => String(Number(v.toFixed(9)));
