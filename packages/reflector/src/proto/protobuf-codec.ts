import protobuf from "protobufjs/light.js";
import type { KubeObject, ObjectList, Status } from "@tessera/client";
import { kindsJson, packageDependencies, packageModules } from "./kinds.generated.js";
import * as metaPackage from "./packages/k8s.io.apimachinery.pkg.apis.meta.v1.generated.js";
import * as runtimePackage from "./packages/k8s.io.apimachinery.pkg.runtime.generated.js";
import { RepeatedStrings } from "./repeated-strings.js";
import { NoJsonFormError, ShapeDecoder } from "./shape-decoder.js";
import type { FieldShape, MessageShapes, PackageModule, TypeShape } from "./shapes.js";

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

/** An envelope found in place: what the object is, and where its message's bytes are. */
interface EnvelopeAt {
  readonly apiVersion: string;
  readonly kind: string;
  readonly from: number;
  readonly to: number;
}

/** How {@link ProtobufCodec} shapes what it decodes. */
export interface DecodeOptions {
  /** Leave `metadata.managedFields` out of every object (for caches that strip them anyway). */
  omitManagedFields?: boolean;
}

/** The packages every object needs (its envelope, ObjectMeta, Status, WatchEvent): loaded with the codec. */
const BASE_PACKAGES: ReadonlyMap<string, PackageModule> = new Map([
  ["k8s.io.apimachinery.pkg.runtime", runtimePackage],
  ["k8s.io.apimachinery.pkg.apis.meta.v1", metaPackage],
]);

/** The protobuf scalar types: every other field type names a message. */
const SCALARS = new Set([
  "string",
  "bytes",
  "bool",
  "double",
  "float",
  "int32",
  "int64",
  "uint32",
  "uint64",
  "sint32",
  "sint64",
  "fixed32",
  "fixed64",
  "sfixed32",
  "sfixed64",
]);

/** The Go package of a protobuf message (`k8s.io.api.core.v1` of `k8s.io.api.core.v1.ConfigMap`). */
const packageOf = (message: string) => message.slice(0, message.lastIndexOf("."));

/** A package module, parsed: its messages' descriptors by short name, their shapes by full name. */
interface ParsedPackage {
  readonly types: Readonly<Record<string, { fields?: Record<string, { type: string }> }>>;
  readonly shapes: Readonly<Record<string, readonly FieldShape[] | null>>;
}

/**
 * Decodes the Kubernetes protobuf wire into the plain JSON shape the JSON
 * path gives: objects, lists and watch events of every built-in kind of the
 * API version it was generated from (k8s.io/api v0.37.2), and `Status`
 * errors. The messages come from protobufjs descriptors (built from the Go
 * modules' `.proto` files) and the JSON shapes from the Go types, one
 * generated module per Go package (`packages/*.generated.ts`, see
 * `tools/proto`). Each message is decoded in one pass from its bytes to its
 * JSON (see `shape-decoder.ts`).
 *
 * A new codec holds the envelope's and ObjectMeta's messages only; the
 * messages of other kinds, and those they refer to, are added by
 * {@link load}, once, before their objects are decoded (`KubeListerWatcher`
 * does so before each request it asks protobuf for). An operator thus holds
 * the messages of the kinds it watches, not of every built-in kind. Loading
 * costs a moment and some memory per kind, so share one codec per process.
 *
 * ```ts
 * const codec = new ProtobufCodec();
 * await codec.load("v1", ["ConfigMap", "ConfigMapList"]);
 * const configMap = codec.decodeObject<V1ConfigMap>(bytes);
 * ```
 */
export class ProtobufCodec {
  private readonly kinds: MessageShapes["kinds"];
  /** The shapes of the loaded messages (the decoders read them as they compile). */
  private readonly messages: Record<string, readonly FieldShape[] | null> = {};
  private readonly root = new protobuf.Root();
  /** The messages in `root` and `messages`, by full name. */
  private readonly loaded = new Set<string>();
  private readonly decoder: ShapeDecoder;
  private readonly decoderWithoutManagedFields: ShapeDecoder;
  /** Watch event types, envelope apiVersions and kinds: decoded once each (see {@link RepeatedStrings}). */
  private readonly eventTypes = new RepeatedStrings();
  private readonly apiVersions = new RepeatedStrings();
  private readonly kindNames = new RepeatedStrings();
  /** The message of the last type decoded (a loaded message stays loaded): a stream's objects are of one. */
  private lastMessage: { apiVersion: string; kind: string; message: string } | undefined;
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

  constructor() {
    this.kinds = JSON.parse(kindsJson) as MessageShapes["kinds"];
    const base = new Map([...BASE_PACKAGES].map(([pkg, module]) => [pkg, parsePackage(module)]));
    this.add(
      [...base].flatMap(([pkg, { types }]) => Object.keys(types).map((name) => `${pkg}.${name}`)),
      base,
    );
    const shapes: MessageShapes = { messages: this.messages, kinds: this.kinds };
    this.decoder = new ShapeDecoder(this.root, shapes);
    this.decoderWithoutManagedFields = new ShapeDecoder(this.root, shapes, { omitManagedFields: true });
    // Length-delimited fields: the field number, then wire type 2.
    const tag = (message: string, field: string) => {
      const f = this.root.lookupType(message).fields[field];
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

  /**
   * Loads the messages of `kinds` of `apiVersion` (default: every kind of
   * it), with every message they refer to, for {@link decodeObject} and the
   * rest: `load("apps/v1", ["Deployment", "DeploymentList"])`. A kind with
   * no protobuf message (a custom resource's) is passed over. Resolves at
   * once for what is loaded already.
   */
  async load(apiVersion: string, kinds?: readonly string[]): Promise<void> {
    const table = this.kinds[apiVersion] ?? {};
    const wanted = (kinds ?? Object.keys(table))
      .map((kind) => table[kind])
      .filter((message): message is string => message !== undefined && !this.loaded.has(message));
    if (wanted.length === 0) return;
    // The modules of their packages and of every package those refer to (a module loads once).
    const packages = new Set<string>();
    for (const pkg of wanted.map(packageOf)) {
      if (!packageModules[pkg]) continue;
      packages.add(pkg);
      for (const dependency of packageDependencies[pkg] ?? []) packages.add(dependency);
    }
    const parsed = new Map(
      await Promise.all(
        [...packages].map(async (pkg) => [pkg, parsePackage(await packageModules[pkg]!())] as const),
      ),
    );
    this.add(wanted, parsed);
  }

  /**
   * Every generated descriptor and shape, merged as one protobufjs
   * descriptor and one {@link MessageShapes} (for tools and tests that
   * encode messages or check the generated files against each other).
   */
  static async readFiles(): Promise<{ descriptor: protobuf.INamespace; shapes: MessageShapes }> {
    const root = new protobuf.Root();
    const messages: Record<string, readonly FieldShape[] | null> = {};
    for (const [pkg, load] of Object.entries(packageModules)) {
      const { types, shapes } = parsePackage(await load());
      root.define(pkg.split("."), types);
      Object.assign(messages, shapes);
    }
    return {
      descriptor: root.toJSON({ keepComments: false }),
      shapes: { messages, kinds: JSON.parse(kindsJson) as MessageShapes["kinds"] },
    };
  }

  /** The protobuf message of a kind, or undefined for a kind this codec does not know (a custom resource). */
  messageFor(apiVersion: string, kind: string): string | undefined {
    return this.kinds[apiVersion]?.[kind];
  }

  /**
   * Adds `messages` and every message they reach (through their fields, in
   * the descriptor and in the shapes) that is not loaded yet, from the
   * parsed `packages`, and resolves their types.
   */
  private add(messages: readonly string[], packages: ReadonlyMap<string, ParsedPackage>): void {
    const picked = new Map<string, Record<string, unknown>>();
    const pending = [...messages];
    const seen = new Set<string>();
    const reach = (shape: TypeShape | undefined): void => {
      if (!shape) return;
      if (shape.m) pending.push(shape.m);
      reach(shape.e);
    };
    for (let message = pending.pop(); message !== undefined; message = pending.pop()) {
      if (seen.has(message) || this.loaded.has(message)) continue;
      seen.add(message);
      const pkg = packageOf(message);
      const parsed = packages.get(pkg);
      const name = message.slice(pkg.length + 1);
      const type = parsed?.types[name];
      // A Go type of the watch machinery with a shape and no message (InternalEvent): nothing to add.
      if (!parsed || !type) continue;
      let types = picked.get(pkg);
      if (!types) picked.set(pkg, (types = {}));
      types[name] = type;
      const shape = parsed.shapes[message];
      if (shape !== undefined) this.messages[message] = shape;
      for (const field of shape ?? []) reach(field.t);
      for (const { type: t } of Object.values(type.fields ?? {})) {
        if (!SCALARS.has(t)) pending.push(t.startsWith(".") ? t.slice(1) : `${pkg}.${t}`);
      }
      this.loaded.add(message);
    }
    for (const [pkg, types] of picked) this.root.define(pkg.split("."), types);
    this.root.resolveAll();
  }

  /** Splits the envelope off `bytes` (magic, then `runtime.Unknown`). */
  unwrap(bytes: Uint8Array): Envelope {
    const buf = asBuffer(bytes);
    const at = this.envelopeAt(protobuf.Reader.create(buf), 0, buf.length);
    return { apiVersion: at.apiVersion, kind: at.kind, raw: buf.subarray(at.from, at.to) };
  }

  /**
   * One object from its enveloped bytes, with `apiVersion` and `kind` as the
   * JSON path has them; `options.omitManagedFields` leaves
   * `metadata.managedFields` out, skipping its bytes undecoded.
   */
  decodeObject<T extends KubeObject>(bytes: Uint8Array, options: DecodeOptions = {}): T {
    const buf = asBuffer(bytes);
    return this.decodeEnvelopedAt<T>(protobuf.Reader.create(buf), 0, buf.length, options);
  }

  /**
   * The object enveloped in bytes `start` to `end` of `r`'s buffer, read
   * with `r` itself: a watch frame's object is decoded in place, without a
   * view of its bytes or a reader of its own.
   */
  private decodeEnvelopedAt<T extends KubeObject>(
    r: protobuf.Reader,
    start: number,
    end: number,
    options: DecodeOptions,
  ): T {
    const envelope = this.envelopeAt(r, start, end);
    const message = this.requireMessage(envelope);
    const decoder = options.omitManagedFields ? this.decoderWithoutManagedFields : this.decoder;
    const out: Record<string, unknown> = { apiVersion: envelope.apiVersion, kind: envelope.kind };
    try {
      // The reader over the object's bytes alone, as a reader of a view of them would be.
      r.pos = envelope.from;
      r.len = envelope.to;
      decoder.decodeInto(message, r, out);
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

  /**
   * The envelope in bytes `start` to `end` of `r`'s buffer (magic, then
   * `runtime.Unknown`): its type and where its message's bytes are. The
   * type's strings are the ones decoded before when the bytes are the same
   * (every object of a stream has the same two).
   */
  private envelopeAt(r: protobuf.Reader, start: number, end: number): EnvelopeAt {
    const buf = r.buf as Buffer;
    const magic = PROTOBUF_MAGIC.length;
    if (end - start < magic || !opensWithMagic(buf, start)) {
      throw new ProtobufDecodeError(
        `not a Kubernetes protobuf object: it opens with ${buf.toString("hex", start, Math.min(end, start + magic)) || "nothing"}, not 6b387300`,
      );
    }
    let apiVersion = "";
    let kind = "";
    let from = 0;
    let to = 0;
    try {
      r.pos = start + magic;
      r.len = end;
      for (let tag = nextLengthDelimited(r, end); tag !== 0; tag = nextLengthDelimited(r, end)) {
        const stop = fieldEnd(r, end);
        if (tag === this.tags.raw) {
          from = r.pos;
          to = stop;
        } else if (tag === this.tags.typeMeta) {
          for (let inner = nextLengthDelimited(r, stop); inner !== 0; inner = nextLengthDelimited(r, stop)) {
            const last = fieldEnd(r, stop);
            if (inner === this.tags.apiVersion) apiVersion = this.apiVersions.at(buf, r.pos, last);
            else if (inner === this.tags.kind) kind = this.kindNames.at(buf, r.pos, last);
            r.pos = last;
          }
        }
        r.pos = stop;
      }
    } catch (err) {
      throw new ProtobufDecodeError(
        `k8s.io.apimachinery.pkg.runtime.Unknown could not be decoded: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return { apiVersion, kind, from, to };
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
   * The frame is read by one reader from its first byte to the object's
   * last, with no view of its parts.
   */
  decodeWatchEvent(frame: Uint8Array, options: DecodeOptions = {}): { type: string; object: unknown } {
    const buf = asBuffer(frame);
    let r: protobuf.Reader;
    let type = "";
    let from = 0;
    let to = 0;
    try {
      r = protobuf.Reader.create(buf);
      const end = r.len;
      for (let tag = nextLengthDelimited(r, end); tag !== 0; tag = nextLengthDelimited(r, end)) {
        const stop = fieldEnd(r, end);
        if (tag === this.tags.eventType) type = this.eventTypes.at(buf, r.pos, stop);
        else if (tag === this.tags.eventObject) {
          for (let inner = nextLengthDelimited(r, stop); inner !== 0; inner = nextLengthDelimited(r, stop)) {
            const last = fieldEnd(r, stop);
            if (inner === this.tags.extensionRaw) {
              from = r.pos;
              to = last;
            }
            r.pos = last;
          }
        }
        r.pos = stop;
      }
    } catch (err) {
      throw new ProtobufDecodeError(
        `k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent could not be decoded: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (!type || to === from) {
      throw new ProtobufDecodeError(`a watch frame without ${type ? "an object" : "a type"}`);
    }
    return { type, object: this.decodeEnvelopedAt(r, from, to, options) };
  }

  private requireMessage(envelope: Pick<Envelope, "apiVersion" | "kind">): string {
    const last = this.lastMessage;
    if (last?.apiVersion === envelope.apiVersion && last.kind === envelope.kind) return last.message;
    const message = this.messageFor(envelope.apiVersion, envelope.kind);
    if (!message) {
      throw new ProtobufDecodeError(
        `no protobuf message known for ${envelope.apiVersion || "(no apiVersion)"} ${envelope.kind || "(no kind)"}`,
      );
    }
    if (!this.loaded.has(message)) {
      throw new ProtobufDecodeError(
        `the protobuf message of ${envelope.apiVersion} ${envelope.kind} is not loaded: await codec.load(${JSON.stringify(envelope.apiVersion)}, [${JSON.stringify(envelope.kind)}]) before decoding it`,
      );
    }
    this.lastMessage = { apiVersion: envelope.apiVersion, kind: envelope.kind, message };
    return message;
  }
}

/** `bytes` as a Buffer over the same memory (protobufjs reads strings from a Buffer natively). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The tag of the next length-delimited field of a small message (the
 * envelope's, the watch event's) before `end`, the reader at its length;
 * fields of other wire types are skipped. 0 at `end`.
 */
function nextLengthDelimited(r: protobuf.Reader, end: number): number {
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 === 0) throw new Error(`field number 0 at byte ${r.pos}`);
    if ((tag & 7) === 2) return tag;
    r.skipType(tag & 7);
  }
  if (r.pos !== end) throw new Error(`a field runs past the end at byte ${r.pos}`);
  return 0;
}

/** Reads a length-delimited field's length: the reader at its first byte, returns where it ends. */
function fieldEnd(r: protobuf.Reader, end: number): number {
  const length = r.uint32();
  const start = r.pos;
  if (start + length > end) throw new Error(`a length of ${length} at byte ${start} runs past the end`);
  return start + length;
}

/** A package module's JSON, parsed (the part a codec keeps is picked from it). */
function parsePackage(module: PackageModule): ParsedPackage {
  return {
    types: JSON.parse(module.descriptorJson) as ParsedPackage["types"],
    shapes: JSON.parse(module.shapesJson) as ParsedPackage["shapes"],
  };
}

/**
 * Whether `buf` holds {@link PROTOBUF_MAGIC} at `start` (the caller checked there are four bytes):
 * compared in place, as `Buffer.compare` with a range costs a call into C++ per object.
 */
function opensWithMagic(buf: Buffer, start: number): boolean {
  return buf[start] === 0x6b && buf[start + 1] === 0x38 && buf[start + 2] === 0x73 && buf[start + 3] === 0x00;
}
