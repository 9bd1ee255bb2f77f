import protobuf from "protobufjs/light.js";
import { formatGoDuration } from "./go-duration.js";
import type { FieldShape, MessageShapes, TypeShape } from "./shapes.js";
import { isoTime } from "@tessera/core";

/** A value on the wire that has no JSON form (a time past what a Date holds, raw JSON that is not JSON). */
export class NoJsonFormError extends Error {
  override name = "NoJsonFormError";
}

/** Bytes that break the protobuf wire (a length past the end, a field crossing its message's end). */
export class WireError extends Error {
  override name = "WireError";
}

// What one wire value is read as. Scalars by their protobuf type; messages by
// the Go type that marshals them (their JSON is not their fields').
const STRING = 0;
const INT32 = 1;
const INT64 = 2;
const UINT32 = 3;
const UINT64 = 4;
const SINT32 = 5;
const SINT64 = 6;
const FIXED32 = 7;
const SFIXED32 = 8;
const FIXED64 = 9;
const SFIXED64 = 10;
const DOUBLE = 11;
const FLOAT = 12;
const BOOL = 13;
const BYTES = 14;
const MESSAGE = 15;
const TIME = 16;
const MICROTIME = 17;
const DURATION = 18;
const QUANTITY = 19;
const INT_OR_STRING = 20;
const RAW_JSON = 21;
/** A Go named slice the .proto wraps in a message of one repeated field (ExtraValue, Verbs). */
const SLICE = 22;

/** Strings up to this many bytes are shared (a uid, 36, is unique: left alone). */
const MAX_SHARED_STRING = 32;
/** Slots of the table of shared strings (a power of two); a string takes the slot its bytes hash to. */
const SHARED_SLOTS = 16_384;

/** The protobuf scalar types (their wire types follow from the op, see wireTypeOf). */
const SCALARS: Readonly<Record<string, number>> = {
  string: STRING,
  bytes: BYTES,
  int32: INT32,
  int64: INT64,
  uint32: UINT32,
  uint64: UINT64,
  sint32: SINT32,
  sint64: SINT64,
  bool: BOOL,
  fixed32: FIXED32,
  sfixed32: SFIXED32,
  float: FLOAT,
  fixed64: FIXED64,
  sfixed64: SFIXED64,
  double: DOUBLE,
};

const SELF_MARSHALLING: Readonly<Record<string, number>> = {
  time: TIME,
  microtime: MICROTIME,
  duration: DURATION,
  quantity: QUANTITY,
  intorstring: INT_OR_STRING,
  rawextension: RAW_JSON,
  fieldsv1: RAW_JSON,
};

/** How one value on the wire becomes JSON. */
interface ValueReader {
  readonly op: number;
  /** The message a MESSAGE reads (compiled before first use: messages may nest themselves). */
  readonly message: CompiledMessage | undefined;
  /** Tags of a self-marshalling message's fields, in the order its reader takes them. */
  readonly tags: readonly number[];
  /** The element of a SLICE. */
  readonly element?: ValueReader;
}

/** A field as the wire carries it. */
interface WireField {
  readonly slot: number;
  readonly value: ValueReader;
  /** repeated: each value is appended (packed scalars arrive several to a record). */
  readonly repeated: boolean;
  /** A packed record of a repeated scalar. */
  readonly packed: boolean;
  /** A map entry: key (string), then a value read by `value`. */
  readonly map: boolean;
  /** Embedded: its byte range is kept, and its fields are written into the parent's object. */
  readonly inline: boolean;
}

// How a field is written to the JSON object: what its zero, its empty and its absent value are.
const W_SCALAR = 0;
const W_COLLECTION = 1;
const W_INLINE = 2;

/** A field as JSON has it, in Go order. */
interface JsonField {
  readonly how: number;
  readonly json: string;
  readonly slot: number;
  readonly op: number;
  readonly omitEmpty: boolean;
  readonly omitZero: boolean;
  readonly pointer: boolean;
  /** A map (W_COLLECTION): absent or without entries is Go's nil map. */
  readonly map: boolean;
  readonly message: CompiledMessage | undefined;
}

/** Reads a message's fields from `r` up to `end` and writes its JSON into `out`. */
type MessageReader = (r: protobuf.Reader, end: number, out: Record<string, unknown>) => void;

interface CompiledMessage {
  readonly name: string;
  /** Field by tag (field number << 3 | wire type): a tag not here is skipped by its wire type. */
  readonly byTag: (WireField | undefined)[];
  readonly fields: JsonField[];
  slots: number;
  /** Generated on first read (after every message it reaches is compiled). */
  reader: MessageReader | undefined;
}

/** Go's `time.Time{}.Unix()`: January 1 of year 1, UTC. */
const GO_ZERO_TIME_UNIX = -62135596800;
const TWO_32 = 4294967296;

/**
 * Decodes Kubernetes protobuf messages in one pass straight into the plain
 * JSON the API server would have sent for the same objects: what
 * `json.Marshal` makes of the Go value that `proto.Unmarshal` makes of the
 * bytes. Field names, omitempty and omitzero, nil against zero, inlined
 * structs, dates as RFC 3339 strings, int-or-string, quantities, durations,
 * bytes as base64, embedded raw JSON. Each message is compiled on first use
 * from its protobufjs descriptor (field numbers, wire types) and its shape
 * (the Go fields, in Go order) into generated code.
 * The wire is read with protobufjs's `Reader`; int64 is read as a JS number
 * (as JSON.parse gives it); strings are decoded once; bytes and raw JSON are
 * read from subarrays; no message object is built besides the output.
 */
export class ShapeDecoder {
  private readonly compiled = new Map<string, CompiledMessage>();
  /** Formatted times by second: objects written together share them, and formatting dominated the profile. */
  private readonly times = new Map<number, string>();
  /**
   * Short strings already decoded, shared by every object that holds them:
   * objects of one kind repeat most of their values ("Running", "True", an
   * image, a mount path), and a string per occurrence made a protobuf-decoded
   * Pod retain half as much heap again as the same Pod from JSON.parse (which
   * shares short strings itself). Found by a hash of their bytes, so that a
   * string seen before is neither decoded nor hashed again as a string (both
   * were a sixth of decoding a Pod); a new string takes its slot from the one
   * there, as names unique per object do all the time.
   */
  private readonly strings: (string | undefined)[] = new Array<string | undefined>(SHARED_SLOTS).fill(
    undefined,
  );

  /**
   * @param options.omitManagedFields leave `metadata.managedFields` out:
   *   its bytes are skipped on the wire without decoding.
   */
  constructor(
    private readonly root: protobuf.Root,
    private readonly shapes: MessageShapes,
    private readonly options: { omitManagedFields?: boolean } = {},
  ) {}

  /**
   * Decodes the message `name` from `reader`'s position to its `len` into
   * `out` (whose own keys come first). Throws WireError for broken bytes,
   * NoJsonFormError for a value with no JSON form; protobufjs's Reader
   * throws RangeError and Error.
   */
  decodeInto(name: string, reader: protobuf.Reader, out: Record<string, unknown>): Record<string, unknown> {
    this.read(this.compile(name), reader, reader.len, out);
    return out;
  }

  /** Compiles `name` and every message it reaches: what the shapes and descriptor disagree on shows here. */
  compile(name: string): CompiledMessage {
    const done = this.compiled.get(name);
    if (done) return done;
    const shape = this.shapes.messages[name];
    if (shape === undefined) throw new TypeError(`no JSON shape for protobuf message ${name}`);
    const type = this.root.lookupType(name);
    const message: CompiledMessage = { name, byTag: [], fields: [], slots: 0, reader: undefined };
    this.compiled.set(name, message); // before its fields: messages may nest themselves
    const claimed = new Set((shape ?? []).map((f) => f.p));
    for (const field of shape ?? []) {
      if (this.options.omitManagedFields && name === OBJECT_META && field.j === "managedFields") continue;
      this.compileField(message, type, field, claimed);
    }
    return message;
  }

  private compileField(
    message: CompiledMessage,
    type: protobuf.Type,
    field: FieldShape,
    claimed: ReadonlySet<string>,
  ): void {
    const where = `${message.name}.${field.p || "(embedded)"}`;
    let proto: protobuf.Field | undefined = type.fields[field.p];
    // An embedded struct the shapes name without its protobuf field (EphemeralContainer's
    // EphemeralContainerCommon): the one unclaimed field of its message type is it.
    if (!proto && field.in) {
      const candidates = type.fieldsArray.filter(
        (f) => !claimed.has(f.name) && f.resolve().resolvedType?.fullName === `.${field.t.m}`,
      );
      if (candidates.length === 1) proto = candidates[0];
    }
    const slot = message.slots;
    message.slots += field.in ? 2 : 1;
    const pointer = field.ptr === true;
    const json: JsonField = {
      how: field.in ? W_INLINE : field.t.k === "slice" || field.t.k === "map" ? W_COLLECTION : W_SCALAR,
      json: field.j,
      slot,
      op: -1,
      omitEmpty: field.oe === true,
      omitZero: field.oz === true,
      pointer,
      map: field.t.k === "map",
      message: undefined,
    };
    if (!proto) {
      // Not on the wire at all (the shapes know a Go field the .proto does not): always absent.
      if (field.in) message.fields.push({ ...json, message: this.compile(field.t.m ?? "") });
      else if (json.how === W_COLLECTION) message.fields.push(json);
      else {
        const value = this.valueReader(field.t, undefined, where);
        message.fields.push({ ...json, op: value.op, message: value.message });
      }
      return;
    }
    proto.resolve();
    if (field.in) {
      const inner = this.compile(field.t.m ?? "");
      message.fields.push({ ...json, message: inner });
      const wire: WireField = {
        slot,
        value: { op: MESSAGE, message: inner, tags: [] },
        repeated: false,
        packed: false,
        map: false,
        inline: true,
      };
      message.byTag[(proto.id << 3) | 2] = wire;
      return;
    }
    if (field.t.k === "map") {
      if (!(proto instanceof protobuf.MapField) || proto.keyType !== "string")
        throw new TypeError(`${where}: a Go map must be a protobuf map with string keys`);
      const value = this.valueReader(field.t.e!, proto, where);
      message.fields.push(json);
      message.byTag[(proto.id << 3) | 2] = {
        slot,
        value,
        repeated: false,
        packed: false,
        map: true,
        inline: false,
      };
      return;
    }
    const slice = field.t.k === "slice" && proto.repeated;
    if (proto.repeated && !slice) throw new TypeError(`${where}: Go ${field.t.k} but protobuf repeated`);
    const value = this.valueReader(slice ? field.t.e! : field.t, proto, where);
    if (field.oz && value.op === MESSAGE)
      throw new TypeError(`${where}: omitzero on a struct field is not supported by this decoder`);
    message.fields.push({ ...json, op: value.op, message: value.message });
    const wireType = wireTypeOf(value.op);
    const base = { slot, value, repeated: slice, map: false, inline: false };
    message.byTag[(proto.id << 3) | wireType] = { ...base, packed: false };
    if (slice && wireType !== 2) message.byTag[(proto.id << 3) | 2] = { ...base, packed: true };
  }

  /** How one value of Go type `t`, on the wire as `proto`'s type, is read. */
  private valueReader(t: TypeShape, proto: protobuf.Field | undefined, where: string): ValueReader {
    const special = SELF_MARSHALLING[t.k];
    if (special !== undefined) {
      const type = proto?.resolvedType instanceof protobuf.Type ? proto.resolvedType : undefined;
      if (proto && !type) throw new TypeError(`${where}: Go ${t.k} but protobuf ${proto.type}`);
      const tag = (names: string[], wireType: number) => {
        const f = names.map((n) => type?.fields[n]).find((x) => x !== undefined);
        if (type && !f) throw new TypeError(`${where}: ${type.fullName} has no field ${names.join(" or ")}`);
        return f ? (f.id << 3) | wireType : -1;
      };
      const tags =
        special === TIME || special === MICROTIME
          ? [tag(["seconds"], 0), tag(["nanos"], 0)]
          : special === DURATION
            ? [tag(["duration"], 0)]
            : special === QUANTITY
              ? [tag(["string"], 2)]
              : special === INT_OR_STRING
                ? [tag(["type"], 0), tag(["intVal"], 0), tag(["strVal"], 2)]
                : [tag(["raw", "Raw"], 2)];
      return { op: special, message: undefined, tags };
    }
    if (t.k === "slice") {
      const wrapper = proto?.resolvedType;
      const items = wrapper instanceof protobuf.Type ? wrapper.fieldsArray : [];
      if (!proto || items.length !== 1 || !items[0]!.repeated)
        throw new TypeError(
          `${where}: Go slice but protobuf ${proto?.type ?? "nothing"}, not one repeated field`,
        );
      const item = items[0]!;
      item.resolve();
      const element = this.valueReader(t.e!, item, where);
      const wireType = wireTypeOf(element.op);
      const tags = [(item.id << 3) | wireType, wireType === 2 ? -1 : (item.id << 3) | 2];
      return { op: SLICE, message: undefined, tags, element };
    }
    if (t.k === "message") {
      const name = t.m ?? "";
      if (proto && proto.resolvedType?.fullName !== `.${name}`)
        throw new TypeError(`${where}: Go ${name} but protobuf ${proto.type}`);
      return { op: MESSAGE, message: this.compile(name), tags: [] };
    }
    const op = proto ? SCALARS[proto.type] : SCALARS[GO_SCALAR[t.k] ?? ""];
    const fits =
      op !== undefined &&
      (t.k === "string"
        ? op === STRING
        : t.k === "bytes"
          ? op === BYTES
          : t.k === "bool"
            ? op === BOOL
            : (t.k === "int" || t.k === "float") && op !== STRING && op !== BYTES && op !== BOOL);
    if (op === undefined || !fits)
      throw new TypeError(`${where}: Go ${t.k} but protobuf ${proto?.type ?? "nothing"}`);
    return { op, message: undefined, tags: [] };
  }

  /** Reads `message`'s fields up to `end`, then writes its JSON into `out`. */
  private read(
    message: CompiledMessage,
    r: protobuf.Reader,
    end: number,
    out: Record<string, unknown>,
  ): void {
    (message.reader ??= this.generate(message))(r, end, out);
  }

  /**
   * The reader of one message as generated code (as protobufjs generates its
   * decoders): a local per field, a switch on the tag, then the JSON fields
   * written in Go order with their omitempty, omitzero and pointer rules
   * decided here, once, instead of per value. Only numbers and
   * JSON-quoted names go into the source.
   */
  private generate(message: CompiledMessage): MessageReader {
    const src: string[] = [];
    for (let i = 0; i < message.slots; i++) src.push(`let v${i};`);
    src.push("while (r.pos < end) {", "const tag = r.uint32();", "switch (tag) {");
    message.byTag.forEach((field, tag) => {
      if (!field) return;
      const v = `v${field.slot}`;
      const value = readExpression(field.value.op, `W[${tag}].value`);
      src.push(`case ${tag}: {`);
      if (field.repeated && field.packed)
        src.push(
          `const last = self.limit(r); const list = ${v} ?? (${v} = []);`,
          `while (r.pos < last) list.push(${value});`,
          "self.ended(r, last, M);",
        );
      else if (field.repeated) src.push(`(${v} ?? (${v} = [])).push(${value});`);
      else if (field.map) src.push(`self.entry(W[${tag}].value, r, ${v} ?? (${v} = {}), M);`);
      else if (field.inline)
        src.push(`const last = self.limit(r); ${v} = r.pos; v${field.slot + 1} = last; r.pos = last;`);
      else src.push(`${v} = ${value};`);
      src.push("break; }");
    });
    src.push("default: skip(r, tag);", "}", "}", "self.ended(r, end, M);");
    message.fields.forEach((f, i) => {
      const v = `v${f.slot}`;
      const key = `out[${JSON.stringify(f.json)}]`;
      const nil = !f.omitEmpty && !f.omitZero ? `${key} = null;` : "";
      if (f.how === W_COLLECTION) {
        // Empty and absent are one on the wire, and a nil slice or map in Go.
        src.push(
          `if (${v} === undefined${f.map ? "" : ` || ${v}.length === 0`}) { ${nil} } else ${key} = ${v};`,
        );
      } else if (f.how === W_INLINE) {
        // Embedded: its JSON fields are the parent's. A nil embedded pointer adds nothing.
        src.push(
          `if (${v} === undefined) { ${f.pointer ? "" : `self.read(F[${i}].message, r, r.pos, out);`} }`,
          `else { const resume = r.pos; r.pos = ${v}; self.read(F[${i}].message, r, v${f.slot + 1}, out); r.pos = resume; }`,
        );
      } else if (f.pointer) {
        // A non-nil pointer is kept even when it points at a zero (but empty bytes are empty).
        const keep = f.omitEmpty && f.op === BYTES ? `if (${v} !== "") ${key} = ${v};` : `${key} = ${v};`;
        src.push(`if (${v} === undefined) { ${nil} } else { ${keep} }`);
      } else {
        const omit: string[] = [];
        if (f.omitZero) omit.push(zeroExpression(f.op, v));
        if (f.omitEmpty && emptyExpression(f.op, v) !== "false") omit.push(emptyExpression(f.op, v));
        const write = `${key} = ${v} !== undefined ? ${v} : ${absentExpression(f.op, i)};`;
        src.push(omit.length > 0 ? `if (!(${omit.join(" || ")})) ${write}` : write);
      }
    });
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the descriptor and shapes only
    const make = new Function(
      "self",
      "M",
      "W",
      "F",
      "skip",
      "varint64",
      `return function read(r, end, out) {\n${src.join("\n")}\n};`,
    ) as (...args: unknown[]) => MessageReader;
    return make(this, message, message.byTag, message.fields, skip, varint64);
  }

  /** The JSON of a non-pointer field the wire left out: Go's zero value. */
  private absent(f: JsonField, r: protobuf.Reader): unknown {
    switch (f.op) {
      case STRING:
        return "";
      case BOOL:
        return false;
      case MESSAGE: {
        const out: Record<string, unknown> = {};
        this.read(f.message!, r, r.pos, out);
        return out;
      }
      case DURATION:
        return "0s";
      case QUANTITY:
        return "0";
      case BYTES:
      case TIME:
      case MICROTIME:
      case RAW_JSON:
      case SLICE:
        return null;
      default:
        return 0; // numbers, int-or-string
    }
  }

  /** A string field's value; short ASCII ones shared (see {@link ShapeDecoder.strings}). */
  str(r: protobuf.Reader): string {
    const end = this.limit(r);
    const start = r.pos;
    r.pos = end;
    const buf = r.buf as SliceableBuffer;
    const length = end - start;
    if (length > MAX_SHARED_STRING || length === 0) return length === 0 ? "" : buf.utf8Slice(start, end);
    // The slot from the length and a few bytes (the first two, the middle one, the last two: where
    // names, addresses and counters differ); the comparison below checks every byte.
    const last = end - 1;
    let hash = Math.imul(length, 0x9e3779b1);
    hash = Math.imul(hash ^ (buf[start] as number), 0x01000193);
    hash = Math.imul(hash ^ (buf[last] as number), 0x01000193);
    if (length > 2) {
      hash = Math.imul(hash ^ (buf[start + 1] as number), 0x01000193);
      hash = Math.imul(hash ^ (buf[last - 1] as number), 0x01000193);
      hash = Math.imul(hash ^ (buf[start + (length >> 1)] as number), 0x01000193);
    }
    const slot = (hash ^ (hash >>> 15)) & (SHARED_SLOTS - 1);
    const seen = this.strings[slot];
    if (seen !== undefined && seen.length === length) {
      let i = 0;
      while (i < length && seen.charCodeAt(i) === buf[start + i]) i++;
      if (i === length) return seen; // every byte the same as an ASCII string's: the same string
    }
    for (let i = start; i < end; i++) if ((buf[i] as number) >= 0x80) return buf.utf8Slice(start, end); // not ASCII: rare, decoded each time
    // ASCII: its Latin-1 reading is its UTF-8 one, and the cheaper.
    const text = buf.latin1Slice(start, end);
    this.strings[slot] = text;
    return text;
  }

  /** One value on the wire, as JSON. */
  private value(v: ValueReader, r: protobuf.Reader): unknown {
    switch (v.op) {
      case STRING:
        return this.str(r);
      case INT32:
        return r.int32();
      case INT64:
        return varint64(r, false);
      case UINT32:
        return r.uint32();
      case UINT64:
        return varint64(r, true);
      case SINT32:
        return r.sint32();
      case SINT64: {
        const n = varint64(r, true);
        // zig-zag: n is even for non-negative values
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      case FIXED32:
        return r.fixed32();
      case SFIXED32:
        return r.sfixed32();
      case FIXED64: {
        const lo = r.fixed32();
        return r.fixed32() * TWO_32 + lo;
      }
      case SFIXED64: {
        const lo = r.fixed32();
        return r.sfixed32() * TWO_32 + lo;
      }
      case DOUBLE:
        return r.double();
      case FLOAT:
        return r.float();
      case BOOL:
        return r.bool();
      case BYTES: {
        const last = this.limit(r);
        const text = (r.buf as Buffer).toString("base64", r.pos, last);
        r.pos = last;
        return text;
      }
      case MESSAGE:
        return this.message(v.message!, r);
      case TIME:
      case MICROTIME:
        return this.time(v, r);
      case SLICE: {
        const last = this.limit(r);
        const list: unknown[] = [];
        while (r.pos < last) {
          const tag = r.uint32();
          if (tag === v.tags[0]) list.push(this.value(v.element!, r));
          else if (tag === v.tags[1]) {
            const packed = this.limit(r);
            while (r.pos < packed) list.push(this.value(v.element!, r));
            this.ended(r, packed, "a packed field");
          } else skip(r, tag);
        }
        this.ended(r, last, "a wrapped list");
        return list;
      }
      case DURATION: {
        const last = this.limit(r);
        let nanos = 0;
        while (r.pos < last) {
          const tag = r.uint32();
          if (tag === v.tags[0]) nanos = varint64(r, false);
          else skip(r, tag);
        }
        this.ended(r, last, "Duration");
        return formatGoDuration(nanos);
      }
      case QUANTITY: {
        const last = this.limit(r);
        let text = "0";
        while (r.pos < last) {
          const tag = r.uint32();
          if (tag === v.tags[0]) text = r.string();
          else skip(r, tag);
        }
        this.ended(r, last, "Quantity");
        return text;
      }
      case INT_OR_STRING: {
        const last = this.limit(r);
        let type = 0;
        let int = 0;
        let str = "";
        while (r.pos < last) {
          const tag = r.uint32();
          if (tag === v.tags[0]) type = varint64(r, false);
          else if (tag === v.tags[1]) int = r.int32();
          else if (tag === v.tags[2]) str = r.string();
          else skip(r, tag);
        }
        this.ended(r, last, "IntOrString");
        return type === 1 ? str : int;
      }
      case RAW_JSON: {
        const last = this.limit(r);
        let start = 0;
        let stop = 0;
        while (r.pos < last) {
          const tag = r.uint32();
          if (tag === v.tags[0]) {
            stop = this.limit(r);
            start = r.pos;
            r.pos = stop;
          } else skip(r, tag);
        }
        this.ended(r, last, "raw JSON");
        if (stop === start) return null;
        const text = (r.buf as Buffer).toString("utf8", start, stop);
        try {
          return JSON.parse(text) as unknown;
        } catch (err) {
          throw new NoJsonFormError(`raw JSON that is not JSON: ${(err as Error).message}`, { cause: err });
        }
      }
      default:
        throw new TypeError(`unknown value reader ${v.op}`);
    }
  }

  /** A message's value (its length, then its fields) as a new object. */
  message(message: CompiledMessage, r: protobuf.Reader): Record<string, unknown> {
    const last = this.limit(r);
    const out: Record<string, unknown> = {};
    (message.reader ??= this.generate(message))(r, last, out);
    return out;
  }

  /** A Time or MicroTime: RFC 3339 to the second or the microsecond; Go's zero time is null. */
  time(v: ValueReader, r: protobuf.Reader): string | null {
    const last = this.limit(r);
    let seconds: number | undefined;
    let nanos = 0;
    while (r.pos < last) {
      const tag = r.uint32();
      if (tag === v.tags[0]) seconds = varint64(r, false);
      else if (tag === v.tags[1]) nanos = r.int32();
      else skip(r, tag);
    }
    this.ended(r, last, "Time");
    // The wire leaves Go's zero time empty, or carries year 1's seconds.
    if (nanos === 0 && (seconds === undefined || seconds === GO_ZERO_TIME_UNIX)) return null;
    const s = seconds ?? 0;
    let text = this.times.get(s);
    if (text === undefined) {
      const date = new Date(s * 1000);
      if (Number.isNaN(date.getTime()))
        throw new NoJsonFormError(`Invalid time value: ${s} seconds is past what a Date holds`);
      if (this.times.size >= 4096) this.times.clear();
      text = `${isoTime(date).slice(0, 19)}Z`;
      this.times.set(s, text);
    }
    return v.op === MICROTIME
      ? `${text.slice(0, 19)}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z`
      : text;
  }

  /** One map entry (key 1, value 2) into `map`; a missing key is "", a missing value its Go zero. */
  private entry(
    v: ValueReader,
    r: protobuf.Reader,
    map: Record<string, unknown>,
    message: CompiledMessage,
  ): void {
    const last = this.limit(r);
    let key = "";
    let value: unknown;
    while (r.pos < last) {
      const tag = r.uint32();
      if (tag === 0x0a) key = this.str(r);
      else if (tag === ((2 << 3) | wireTypeOf(v.op))) value = this.value(v, r);
      else skip(r, tag);
    }
    this.ended(r, last, message);
    // Go's nil slice for an entry with no items, and its zero for an entry with no value.
    if (value === undefined || (v.op === SLICE && (value as unknown[]).length === 0))
      value = this.zeroValue(v, r);
    if (key === "__proto__")
      Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
    else map[key] = value;
  }

  private zeroValue(v: ValueReader, r: protobuf.Reader): unknown {
    return this.absent({ op: v.op, message: v.message } as JsonField, r);
  }

  /** Reads a length and returns where those bytes end, refusing a length past the end of the buffer. */
  private limit(r: protobuf.Reader): number {
    const length = r.uint32();
    const last = r.pos + length;
    if (last > r.len)
      throw new WireError(`a length of ${length} at byte ${r.pos} runs past the end (${r.len} bytes)`);
    return last;
  }

  /** Refuses a field that ran over the end of the record that holds it. */
  private ended(r: protobuf.Reader, end: number, what: CompiledMessage | string): void {
    if (r.pos !== end)
      throw new WireError(
        `${typeof what === "string" ? what : what.name} ends at byte ${end} but a field in it runs to ${r.pos}`,
      );
  }
}

const OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/**
 * Node's Buffer with the string readers `toString` dispatches to (present
 * since Node 0.x, untyped in @types/node; protobufjs reads its strings with
 * `utf8Slice` too): called directly, they skip `toString`'s checks.
 */
type SliceableBuffer = Buffer & {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
};

/** The protobuf type a Go scalar has when the shapes name a field the .proto does not carry. */
const GO_SCALAR: Readonly<Record<string, string>> = {
  string: "string",
  bytes: "bytes",
  bool: "bool",
  int: "int64",
  float: "double",
};

function wireTypeOf(op: number): number {
  switch (op) {
    case FIXED64:
    case SFIXED64:
    case DOUBLE:
      return 1;
    case FIXED32:
    case SFIXED32:
    case FLOAT:
      return 5;
    case STRING:
    case BYTES:
    case MESSAGE:
    case TIME:
    case MICROTIME:
    case DURATION:
    case QUANTITY:
    case INT_OR_STRING:
    case RAW_JSON:
    case SLICE:
      return 2;
    default:
      return 0;
  }
}

/**
 * Generated code that reads one value of `op`: the plain scalars inline, messages and times through
 * their readers, the rest through the decoder's switch.
 */
function readExpression(op: number, reader: string): string {
  switch (op) {
    case STRING:
      return "self.str(r)";
    case INT32:
      return "r.int32()";
    case INT64:
      return "varint64(r, false)";
    case UINT32:
      return "r.uint32()";
    case BOOL:
      return "r.bool()";
    case MESSAGE:
      return `self.message(${reader}.message, r)`;
    case TIME:
    case MICROTIME:
      return `self.time(${reader}, r)`;
    default:
      return `self.value(${reader}, r)`;
  }
}

/** Generated code: what omitzero leaves out, the Go zero value (undefined: the wire left it out). */
function zeroExpression(op: number, v: string): string {
  switch (op) {
    case BYTES:
    case QUANTITY:
      return `${v} === undefined`;
    case TIME:
    case MICROTIME:
    case RAW_JSON:
      return `${v} == null`;
    case DURATION:
      return `(${v} === undefined || ${v} === "0s")`;
    case STRING:
      return `(${v} === undefined || ${v} === "")`;
    case BOOL:
      return `(${v} === undefined || ${v} === false)`;
    case INT_OR_STRING:
    default:
      return `(${v} === undefined || ${v} === 0)`; // numbers
  }
}

/** Generated code: what omitempty leaves out, false, 0, "" and empty bytes (never a struct or a self-marshalling type). */
function emptyExpression(op: number, v: string): string {
  switch (op) {
    case MESSAGE:
    case TIME:
    case MICROTIME:
    case DURATION:
    case QUANTITY:
    case INT_OR_STRING:
    case RAW_JSON:
    case SLICE:
      return "false";
    case BYTES:
    case STRING:
      return `(${v} === undefined || ${v} === "")`;
    case BOOL:
      return `(${v} === undefined || ${v} === false)`;
    default:
      return `(${v} === undefined || ${v} === 0)`;
  }
}

/** Generated code for the JSON of a non-pointer field the wire left out (see {@link ShapeDecoder.absent}). */
function absentExpression(op: number, field: number): string {
  switch (op) {
    case STRING:
      return '""';
    case BOOL:
      return "false";
    case DURATION:
      return '"0s"';
    case QUANTITY:
      return '"0"';
    case BYTES:
    case TIME:
    case MICROTIME:
    case RAW_JSON:
    case SLICE:
      return "null";
    case MESSAGE:
      return `self.absent(F[${field}], r)`;
    default:
      return "0";
  }
}

/** Skips a field the decoder does not take, by its wire type (field number 0 is never valid). */
function skip(r: protobuf.Reader, tag: number): void {
  if (tag >>> 3 === 0) throw new WireError(`field number 0 at byte ${r.pos}`);
  r.skipType(tag & 7);
}

/**
 * A varint as a JS number, as JSON.parse reads the decimal the API server
 * writes (exact up to 2^53). protobufjs's own int64() gives a Long.
 */
function varint64(r: protobuf.Reader, unsigned: boolean): number {
  const buf = r.buf;
  let pos = r.pos;
  let lo = 0;
  let b: number;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= r.len) throw new WireError(`a varint at byte ${r.pos} runs past the end`);
    b = buf[pos++]!;
    lo |= (b & 127) << shift;
    if (b < 128) {
      r.pos = pos;
      return lo;
    }
  }
  if (pos >= r.len) throw new WireError(`a varint at byte ${r.pos} runs past the end`);
  b = buf[pos++]!;
  lo |= (b & 127) << 28;
  let hi = (b & 127) >> 4;
  if (b >= 128) {
    for (let shift = 3; ; shift += 7) {
      if (shift > 31) throw new WireError(`a varint at byte ${r.pos} is longer than 10 bytes`);
      if (pos >= r.len) throw new WireError(`a varint at byte ${r.pos} runs past the end`);
      b = buf[pos++]!;
      hi |= (b & 127) << shift;
      if (b < 128) break;
    }
  }
  r.pos = pos;
  return (unsigned ? hi >>> 0 : hi | 0) * TWO_32 + (lo >>> 0);
}
