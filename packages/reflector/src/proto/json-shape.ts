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

/** How one Go type turns into JSON, compiled once per field (no allocation per value beyond the value). */
interface Converter {
  value(raw: unknown, present: boolean): unknown;
  /** What omitempty leaves out: false, 0, "", nil or empty slices and maps (never a struct). */
  empty(raw: unknown, present: boolean): boolean;
  /** What omitzero leaves out: the Go zero value. */
  zero(raw: unknown, present: boolean): boolean;
}

type Writer = (message: Decoded, out: Record<string, unknown>) => void;

/**
 * Turns messages decoded by protobufjs (only the fields on the wire are
 * their own properties) into the plain JSON the API server would have sent
 * for the same objects: what `json.Marshal` makes of the Go value that
 * `proto.Unmarshal` makes of the bytes. Field names, omitempty and omitzero,
 * nil against zero, inlined structs, dates as RFC 3339 strings,
 * int-or-string, quantities, durations, bytes as base64, embedded raw JSON.
 * Each message's fields are compiled into writers on first use.
 */
export class JsonShaper {
  private readonly compiled = new Map<string, Writer[]>();
  /** Formatted times by second: objects written together share them, and formatting dominated the profile. */
  private readonly times = new Map<number, string>();

  /**
   * @param options.omitManagedFields leave `metadata.managedFields` out of
   *   every object, for caches that strip them anyway: shaping them (each
   *   entry's fieldsV1 is JSON to parse) is a large part of decoding a small object.
   */
  constructor(
    private readonly shapes: MessageShapes,
    private readonly options: { omitManagedFields?: boolean } = {},
  ) {}

  /** The JSON form of `message`, a decoded `messageName`. */
  toJson(messageName: string, message: Decoded): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.write(messageName, message, out);
    return out;
  }

  private write(messageName: string, message: Decoded, out: Record<string, unknown>): void {
    let writers = this.compiled.get(messageName);
    if (!writers) {
      const fields = this.shapes.messages[messageName];
      if (!fields) throw new TypeError(`no JSON shape for protobuf message ${messageName}`);
      writers = [];
      this.compiled.set(messageName, writers); // before compiling: messages may nest themselves
      for (const field of fields) writers.push(this.compileField(field, messageName));
    }
    for (const w of writers) w(message, out);
  }

  private compileField(field: FieldShape, messageName: string): Writer {
    const { p, j } = field;
    if (this.options.omitManagedFields && messageName === OBJECT_META && j === "managedFields")
      return () => {};
    const ptr = field.ptr === true;
    const oe = field.oe === true;
    const oz = field.oz === true;
    if (field.in) {
      // Embedded: its JSON fields are the parent's. A nil embedded pointer adds nothing.
      const inner = field.t.m ?? "";
      return (m, out) => {
        const present = Object.hasOwn(m, p);
        if (ptr && !present) return;
        this.write(inner, present ? (m[p] as Decoded) : {}, out);
      };
    }
    const c = this.converter(field.t);
    const collection = field.t.k === "slice" || field.t.k === "map" || field.t.k === "bytes";
    return (m, out) => {
      const present = Object.hasOwn(m, p);
      if (ptr && !present) {
        if (!oe && !oz) out[j] = null;
        return;
      }
      const raw = present ? m[p] : undefined;
      const kept = ptr && present; // a non-nil pointer is kept even when it points at a zero
      if (oz && !kept && c.zero(raw, present)) return;
      if (oe && !(kept && !collection) && c.empty(raw, present)) return;
      out[j] = c.value(raw, present);
    };
  }

  private converter(t: TypeShape): Converter {
    const never = () => false;
    switch (t.k) {
      case "string": {
        const str = (raw: unknown, present: boolean) => (present ? String(raw) : "");
        const none = (raw: unknown, present: boolean) => !present || raw === "";
        return { value: str, empty: none, zero: none };
      }
      case "bool": {
        const none = (raw: unknown, present: boolean) => !present || !raw;
        return { value: (raw, present) => present && Boolean(raw), empty: none, zero: none };
      }
      case "int":
      case "float": {
        const none = (raw: unknown, present: boolean) => !present || toNumber(raw) === 0;
        return { value: (raw, present) => (present ? toNumber(raw) : 0), empty: none, zero: none };
      }
      case "bytes": {
        const none = (raw: unknown, present: boolean) => !present || (raw as Uint8Array).length === 0;
        return {
          value: (raw, present) => (present ? Buffer.from(raw as Uint8Array).toString("base64") : null),
          empty: none,
          zero: (_raw, present) => !present,
        };
      }
      case "slice": {
        const item = this.converter(t.e!);
        // Empty and absent are one on the wire, and a nil slice after decoding.
        const none = (raw: unknown, present: boolean) => !present || (raw as unknown[]).length === 0;
        return {
          value: (raw, present) =>
            none(raw, present) ? null : (raw as unknown[]).map((v) => item.value(v, true)),
          empty: none,
          zero: none,
        };
      }
      case "map": {
        const entry = this.converter(t.e!);
        const none = (raw: unknown, present: boolean) => {
          if (!present) return true;
          for (const key in raw as object) if (Object.hasOwn(raw as object, key)) return false;
          return true;
        };
        return {
          value: (raw, present) => {
            if (none(raw, present)) return null;
            const out: Record<string, unknown> = {};
            for (const key in raw as Record<string, unknown>) {
              if (Object.hasOwn(raw as object, key))
                out[key] = entry.value((raw as Record<string, unknown>)[key], true);
            }
            return out;
          },
          empty: none,
          zero: none,
        };
      }
      case "message": {
        const name = t.m!;
        return {
          value: (raw, present) => this.toJson(name, present ? (raw as Decoded) : {}),
          empty: never,
          zero: (raw, present) => !present || isZeroMessage(raw as Decoded),
        };
      }
      case "time":
      case "microtime": {
        const micro = t.k === "microtime";
        // Go's zero time (year 1) marshals as null; the wire leaves it empty, or carries year 1's seconds.
        const isZero = (raw: unknown, present: boolean) => {
          if (!present) return true;
          const m = raw as Decoded;
          return (
            toNumber(m["nanos"]) === 0 &&
            (!Object.hasOwn(m, "seconds") || toNumber(m["seconds"]) === GO_ZERO_TIME_UNIX)
          );
        };
        const seconds = (s: number): string => {
          let text = this.times.get(s);
          if (text === undefined) {
            if (this.times.size >= 4096) this.times.clear();
            text = new Date(s * 1000).toISOString().slice(0, 19);
            this.times.set(s, text);
          }
          return text;
        };
        return {
          value: (raw, present) => {
            if (isZero(raw, present)) return null;
            const m = raw as Decoded;
            const base = seconds(toNumber(m["seconds"]));
            return micro
              ? `${base}.${String(Math.floor(toNumber(m["nanos"]) / 1000)).padStart(6, "0")}Z`
              : `${base}Z`;
          },
          empty: never,
          zero: isZero,
        };
      }
      case "duration": {
        const nanos = (raw: unknown, present: boolean) =>
          present ? toNumber((raw as Decoded)["duration"]) : 0;
        return {
          value: (raw, present) => formatGoDuration(nanos(raw, present)),
          empty: never,
          zero: (raw, present) => nanos(raw, present) === 0,
        };
      }
      case "quantity":
        return {
          value: (raw, present) =>
            present && Object.hasOwn(raw as object, "string") ? String((raw as Decoded)["string"]) : "0",
          empty: never,
          zero: (_raw, present) => !present,
        };
      case "intorstring": {
        const value = (raw: unknown, present: boolean): string | number => {
          const m = (present ? raw : {}) as Decoded;
          if (toNumber(m["type"]) === 1) return typeof m["strVal"] === "string" ? m["strVal"] : "";
          return toNumber(m["intVal"]);
        };
        return { value, empty: never, zero: (raw, present) => !present || value(raw, present) === 0 };
      }
      case "rawextension":
      case "fieldsv1": {
        const bytes = (raw: unknown, present: boolean) =>
          present
            ? (((raw as Decoded)["raw"] ?? (raw as Decoded)["Raw"]) as Uint8Array | undefined)
            : undefined;
        return {
          value: (raw, present) => {
            const b = bytes(raw, present);
            return b && b.length > 0 ? (JSON.parse(Buffer.from(b).toString("utf8")) as unknown) : null;
          },
          empty: never,
          zero: (raw, present) => (bytes(raw, present)?.length ?? 0) === 0,
        };
      }
      default:
        throw new TypeError(`unknown Go type kind ${t.k}`);
    }
  }
}

const OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta";

function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (v && typeof (v as { toNumber?: unknown }).toNumber === "function")
    return (v as { toNumber(): number }).toNumber();
  return Number(v ?? 0);
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
