import protobuf from "protobufjs";
import type { KubeObject, ObjectList, Status } from "../kube-object.js";
import { descriptorJson } from "./descriptor.generated.js";
import { JsonShaper, type MessageShapes } from "./json-shape.js";
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
 * `shapes.generated.ts` (read from the Go types): see `tools/proto`. Loading
 * both takes a moment and a few MiB, so share one codec per process.
 */
export class ProtobufCodec {
  private readonly root: protobuf.Root;
  private readonly shapes: MessageShapes;
  private readonly shaper: JsonShaper;
  private shaperWithoutManagedFields: JsonShaper | undefined;
  private readonly types = new Map<string, protobuf.Type>();

  constructor(files: { descriptor: unknown; shapes: MessageShapes } = ProtobufCodec.readFiles()) {
    this.root = protobuf.Root.fromJSON(files.descriptor as protobuf.INamespace);
    this.shapes = files.shapes;
    this.shaper = new JsonShaper(files.shapes);
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
    const unknown = this.decodeMessage(
      "k8s.io.apimachinery.pkg.runtime.Unknown",
      bytes.subarray(PROTOBUF_MAGIC.length),
    ) as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
    return {
      apiVersion: unknown.typeMeta?.apiVersion ?? "",
      kind: unknown.typeMeta?.kind ?? "",
      raw: unknown.raw ?? new Uint8Array(),
    };
  }

  /**
   * One object from its enveloped bytes, with `apiVersion` and `kind` as the
   * JSON path has them; `options.omitManagedFields` leaves
   * `metadata.managedFields` out (see {@link JsonShaper}).
   */
  decodeObject<T extends KubeObject>(bytes: Uint8Array, options: DecodeOptions = {}): T {
    const envelope = this.unwrap(bytes);
    const message = this.requireMessage(envelope);
    const decoded = this.decodeMessage(message, envelope.raw);
    const shaper = options.omitManagedFields
      ? (this.shaperWithoutManagedFields ??= new JsonShaper(this.shapes, { omitManagedFields: true }))
      : this.shaper;
    let json: Record<string, unknown>;
    try {
      json = shaper.toJson(message, decoded);
    } catch (err) {
      // Bytes that decode can still hold values JSON has no form for: a time past year 275760
      // (RangeError), managed fields whose raw bytes are not JSON (SyntaxError). They are bad bytes too.
      throw new ProtobufDecodeError(
        `${envelope.apiVersion} ${envelope.kind} has a value with no JSON form: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return { apiVersion: envelope.apiVersion, kind: envelope.kind, ...json } as T;
  }

  /** A LIST response; its items carry no `apiVersion` or `kind`, as in JSON. */
  decodeList<T extends KubeObject>(bytes: Uint8Array, options: DecodeOptions = {}): ObjectList<T> {
    const list = this.decodeObject<KubeObject & { items?: T[] | null }>(bytes, options);
    return { ...list, items: list.items ?? [] };
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
    const event = this.decodeMessage("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent", frame) as {
      type?: string;
      object?: { raw?: Uint8Array };
    };
    const raw = event.object?.raw;
    if (!event.type || !raw || raw.length === 0) {
      throw new ProtobufDecodeError(`a watch frame without ${event.type ? "an object" : "a type"}`);
    }
    return { type: event.type, object: this.decodeObject(raw, options) };
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

  private decodeMessage(name: string, bytes: Uint8Array): Record<string, unknown> {
    let type = this.types.get(name);
    if (!type) {
      type = this.root.lookupType(name);
      this.types.set(name, type);
    }
    try {
      return type.decode(bytes);
    } catch (err) {
      throw new ProtobufDecodeError(`${name} could not be decoded: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}
