import protobuf from "protobufjs";
import type { KubeObject, ObjectList, Status } from "@tessera/client";
import { descriptorJson } from "./descriptor.generated.js";
import { NoJsonFormError, ShapeDecoder } from "./shape-decoder.js";
import type { MessageShapes } from "./shapes.js";
import { shapesJson } from "./shapes.generated.js";

/** The 4 bytes that open every Kubernetes protobuf object: "k8s" and a zero. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The media type of protobuf objects and lists. */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/** Bytes that are not what the Kubernetes protobuf wire promises; the caller names resource and verb. */
export class ProtobufDecodeError extends Error {
  override name = "ProtobufDecodeError";
}

/** An envelope's content: what the object is, and its message bytes. */
export interface Envelope {
  readonly apiVersion: string;
  readonly kind: string;
  readonly raw: Uint8Array;
}

/** How {@link ProtobufCodec} shapes what it decodes. */
export interface DecodeOptions {
  /** Leave `metadata.managedFields` out of every object (for caches that strip them anyway). */
  omitManagedFields?: boolean;
}

/**
 * Decodes the Kubernetes protobuf wire into the plain JSON shape the JSON
 * path gives: objects, lists and watch events of every built-in kind of the
 * API version it was generated from (k8s.io/api v0.37.2), and `Status`
 * errors. The messages come from `descriptor.generated.ts` (protobufjs,
 * built from the Go modules' `.proto` files) and the JSON shapes from
 * `shapes.generated.ts` (read from the Go types): see `tools/proto`. Each
 * message is decoded in one pass from its bytes to its JSON (see
 * `shape-decoder.ts`). Loading both files takes a moment and a few MiB,
 * so share one codec per process.
 */
export class ProtobufCodec {
  private readonly shapes: MessageShapes;
  private readonly decoder: ShapeDecoder;
  private readonly decoderWithoutManagedFields: ShapeDecoder;
  /** Tags of the envelope's and the watch event's fields. */
  private readonly tags: {
    typeMeta: number;
    raw: number;
    apiVersion: number;
    kind: number;
    eventType: number;
    eventObject: number;
    extensionRaw: number;
  };

  constructor(files: { descriptor: unknown; shapes: MessageShapes } = ProtobufCodec.readFiles()) {
    const root = protobuf.Root.fromJSON(files.descriptor as protobuf.INamespace);
    this.shapes = files.shapes;
    this.decoder = new ShapeDecoder(root, files.shapes);
    this.decoderWithoutManagedFields = new ShapeDecoder(root, files.shapes, { omitManagedFields: true });
    // Length-delimited fields: the field number, then wire type 2.
    const tag = (message: string, field: string) => {
      const f = root.lookupType(message).fields[field];
      if (!f) throw new TypeError(`the protobuf descriptor has no ${message}.${field}`);
      return (f.id << 3) | 2;
    };
    const runtime = "k8s.io.apimachinery.pkg.runtime";
    const meta = "k8s.io.apimachinery.pkg.apis.meta.v1";
    this.tags = {
      typeMeta: tag(`${runtime}.Unknown`, "typeMeta"),
      raw: tag(`${runtime}.Unknown`, "raw"),
      apiVersion: tag(`${runtime}.TypeMeta`, "apiVersion"),
      kind: tag(`${runtime}.TypeMeta`, "kind"),
      eventType: tag(`${meta}.WatchEvent`, "type"),
      eventObject: tag(`${meta}.WatchEvent`, "object"),
      extensionRaw: tag(`${runtime}.RawExtension`, "raw"),
    };
  }

  /** The generated descriptor and shapes compiled into the package (modules, so bundlers carry them). */
  static readFiles(): { descriptor: unknown; shapes: MessageShapes } {
    return {
      descriptor: JSON.parse(descriptorJson) as unknown,
      shapes: JSON.parse(shapesJson) as MessageShapes,
    };
  }

  /** The protobuf message of a kind, or undefined for a kind this codec does not know (a custom resource). */
  messageFor(apiVersion: string, kind: string): string | undefined {
    return this.shapes.kinds[apiVersion]?.[kind];
  }

  /** Splits the envelope off `bytes` (magic, then `runtime.Unknown`). */
  unwrap(bytes: Uint8Array): Envelope {
    if (
      bytes.length < PROTOBUF_MAGIC.length ||
      !PROTOBUF_MAGIC.equals(bytes.subarray(0, PROTOBUF_MAGIC.length))
    ) {
      throw new ProtobufDecodeError(
        `not a Kubernetes protobuf object: it opens with ${Buffer.from(bytes.subarray(0, 4)).toString("hex") || "nothing"}, not 6b387300`,
      );
    }
    const body = asBuffer(bytes).subarray(PROTOBUF_MAGIC.length);
    let apiVersion = "";
    let kind = "";
    let raw: Uint8Array = new Uint8Array();
    try {
      const r = protobuf.Reader.create(body);
      for (const [tag, start, end] of fields(r, r.len)) {
        if (tag === this.tags.raw) raw = body.subarray(start, end);
        else if (tag === this.tags.typeMeta) {
          r.pos = start;
          for (const [inner, from, to] of fields(r, end)) {
            if (inner === this.tags.apiVersion) apiVersion = body.toString("utf8", from, to);
            else if (inner === this.tags.kind) kind = body.toString("utf8", from, to);
          }
        }
      }
    } catch (err) {
      throw new ProtobufDecodeError(
        `k8s.io.apimachinery.pkg.runtime.Unknown could not be decoded: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return { apiVersion, kind, raw };
  }

  /**
   * One object from its enveloped bytes, with `apiVersion` and `kind` as the
   * JSON path has them; `options.omitManagedFields` leaves
   * `metadata.managedFields` out, skipping its bytes undecoded.
   */
  decodeObject<T extends KubeObject>(bytes: Uint8Array, options: DecodeOptions = {}): T {
    const envelope = this.unwrap(bytes);
    const message = this.requireMessage(envelope);
    const decoder = options.omitManagedFields ? this.decoderWithoutManagedFields : this.decoder;
    const out: Record<string, unknown> = { apiVersion: envelope.apiVersion, kind: envelope.kind };
    try {
      decoder.decodeInto(message, asBuffer(envelope.raw), out);
    } catch (err) {
      // Bytes that decode can still hold values JSON has no form for: a time past year 275760,
      // managed fields whose raw bytes are not JSON. They are bad bytes too.
      if (err instanceof NoJsonFormError)
        throw new ProtobufDecodeError(
          `${envelope.apiVersion} ${envelope.kind} has a value with no JSON form: ${err.message}`,
          { cause: err },
        );
      throw new ProtobufDecodeError(`${message} could not be decoded: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return out as T;
  }

  /** A LIST response; its items carry no `apiVersion` or `kind`, as in JSON. */
  decodeList<T extends KubeObject>(bytes: Uint8Array, options: DecodeOptions = {}): ObjectList<T> {
    const list = this.decodeObject<KubeObject & { items?: T[] | null }>(bytes, options);
    list.items ??= [];
    return list as ObjectList<T>;
  }

  /** A `Status` (an error response, a watch ERROR event's object). */
  decodeStatus(bytes: Uint8Array): Status {
    return this.decodeObject<Status & KubeObject>(bytes);
  }

  /**
   * One frame of a protobuf watch stream: a `WatchEvent` whose object is an
   * enveloped object. Resolves `{ type, object }` as a JSON watch line parses.
   */
  decodeWatchEvent(frame: Uint8Array, options: DecodeOptions = {}): { type: string; object: unknown } {
    let type = "";
    let raw: Uint8Array | undefined;
    try {
      const buf = asBuffer(frame);
      const r = protobuf.Reader.create(buf);
      for (const [tag, start, end] of fields(r, r.len)) {
        if (tag === this.tags.eventType) type = buf.toString("utf8", start, end);
        else if (tag === this.tags.eventObject) {
          r.pos = start;
          for (const [inner, from, to] of fields(r, end))
            if (inner === this.tags.extensionRaw) raw = buf.subarray(from, to);
        }
      }
    } catch (err) {
      throw new ProtobufDecodeError(
        `k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent could not be decoded: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (!type || !raw || raw.length === 0) {
      throw new ProtobufDecodeError(`a watch frame without ${type ? "an object" : "a type"}`);
    }
    return { type, object: this.decodeObject(raw, options) };
  }

  private requireMessage(envelope: Envelope): string {
    const message = this.messageFor(envelope.apiVersion, envelope.kind);
    if (!message) {
      throw new ProtobufDecodeError(
        `no protobuf message known for ${envelope.apiVersion || "(no apiVersion)"} ${envelope.kind || "(no kind)"}`,
      );
    }
    return message;
  }
}

/** `bytes` as a Buffer over the same memory (protobufjs reads strings from a Buffer natively). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The fields of a small message up to `end`, as [tag, start, end] of each
 * length-delimited one (the envelope's, the watch event's); others are
 * skipped by wire type. Leaves the reader after each field's bytes.
 */
function* fields(r: protobuf.Reader, end: number): Generator<[number, number, number]> {
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 === 0) throw new Error(`field number 0 at byte ${r.pos}`);
    if ((tag & 7) !== 2) {
      r.skipType(tag & 7);
      continue;
    }
    const length = r.uint32();
    const start = r.pos;
    if (start + length > end) throw new Error(`a length of ${length} at byte ${start} runs past the end`);
    r.pos = start + length;
    yield [tag, start, r.pos];
    r.pos = start + length;
  }
  if (r.pos !== end) throw new Error(`a field runs past the end at byte ${r.pos}`);
}
