import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { KubeConfigLike, KubeObject, ObjectList, Status } from "@tessera/client";
import { toError } from "@tessera/core";
import type { ListerWatcher, WatchEventHandler } from "./lister-watcher.js";
import { toQueryString, type ListOptions, type WatchOptions } from "./list-options.js";
import {
  ApiStatusError,
  ConnectionError,
  ListWatchError,
  StreamDecodeError,
  type ListWatchErrorContext,
  type ListWatchVerb,
} from "./list-watch-error.js";
import {
  KubeRequestError,
  sendKubeRequest,
  assertResource,
  collectionPath,
  describeResource,
  type Resource,
  statusReasonForHttpCode,
} from "@tessera/client";
import { acceptEncoding, readBody, responseBody, type Compression } from "./response-body.js";
import { NdjsonDecoder } from "./ndjson-decoder.js";
import { decodeListBody } from "./list-body.js";
import { toWatchEvent } from "./watch-event-decoding.js";
import { LengthDelimitedFrames } from "./proto/length-delimited-frames.js";
import {
  PROTOBUF_MEDIA_TYPE,
  ProtobufCodec,
  ProtobufDecodeError,
  type DecodeOptions,
} from "./proto/protobuf-codec.js";

/** Options of a {@link KubeListerWatcher}. */
export interface KubeListerWatcherOptions {
  /** Namespace to list and watch (namespaced resources only); absent: all namespaces. */
  namespace?: string;
  /** Sent with every request unless the request's own options set it. */
  labelSelector?: string;
  /** Sent with every request unless the request's own options set it. */
  fieldSelector?: string;
  /** Sent with every request unless the request's own options set it. */
  shardSelector?: string;
  /**
   * A LIST whose connection carries nothing for this long is abandoned with a
   * {@link ConnectionError}; default 60 s (kube-apiserver's own request
   * timeout). Watches have their deadlines in the reflector.
   */
  listIdleTimeoutMs?: number;
  /**
   * The `Accept` header of LIST and of WATCH requests; default
   * `application/json` for both. Any JSON media type the server answers with
   * the same list and event shapes will do, e.g. metadata only
   * (`application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` for
   * LIST, `...;as=PartialObjectMetadata;...` for WATCH).
   */
  accept?: { list?: string; watch?: string };
  /**
   * `"gzip"` offers `Accept-Encoding: gzip` on LIST and WATCH requests; the
   * server compresses what it chooses to (kube-apiserver: responses past
   * about 128 KiB, and watch-list streams), and the body is decompressed as
   * it streams in. Default `"none"`: on a fast link the compression costs
   * the server more CPU than the bytes it saves (see docs/benchmarks.md).
   */
  compression?: Compression;
  /**
   * `"protobuf"` asks for Kubernetes protobuf first (`Accept:
   * application/vnd.kubernetes.protobuf, application/json`): the API server
   * answers built-in kinds in protobuf, which is decoded into the same plain
   * JSON shape, and custom resources in JSON. A kind the decoder has no
   * message for (`CustomResourceDefinition`, `APIService`: their messages live
   * outside k8s.io/api) is asked for in JSON. Default `"json"`. Ignored when
   * `accept` is set.
   */
  wire?: "json" | "protobuf";
  /**
   * The decoder of the protobuf wire; share one per process (each kind's
   * messages are loaded into it once, before the first request for that
   * kind). Default: one of its own.
   */
  protobufCodec?: ProtobufCodec;
  /**
   * Leave `metadata.managedFields` out of every object listed or watched, for
   * a cache that strips them anyway (`stripManagedFields`). On the protobuf
   * wire they are then never shaped into JSON, which saves a large part of
   * decoding a small object; on JSON they are deleted after parsing.
   */
  stripManagedFields?: boolean;
}

const JSON_MEDIA_TYPE = "application/json";
const PROTOBUF_FIRST = `${PROTOBUF_MEDIA_TYPE}, ${JSON_MEDIA_TYPE}`;

/** Whether the server answered in Kubernetes protobuf. */
const isProtobuf = (res: IncomingMessage) =>
  String(res.headers["content-type"] ?? "").startsWith(PROTOBUF_MEDIA_TYPE);

/** Most bytes of an error response read for its Status. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The {@link ListerWatcher} over a @kubernetes/client-node `KubeConfig`, for
 * any resource. It authenticates with whatever the KubeConfig's current user
 * holds (client certificates, bearer tokens, token files, exec and auth-provider
 * plugins, refreshed per request through `applyToHTTPSOptions`), honours the
 * cluster's CA, proxy and TLS settings, and speaks JSON over node's HTTP stack.
 * A watch response is decoded line by line as it arrives. The object type is
 * the handle's: over `ConfigMaps` it is a `KubeListerWatcher<V1ConfigMap>`.
 *
 * ```ts
 * const lw = new KubeListerWatcher(kc, ConfigMaps, { namespace: "default" });
 * const page = await lw.list({ limit: 500 }); // ObjectList<V1ConfigMap>
 * ```
 */
export class KubeListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  /** The resource, as kubectl names it (`configmaps`, `widgets.example.com`), for logs and errors. */
  readonly resource: string;
  /** The typed handle of what this lists and watches. */
  readonly handle: Resource<T>;
  readonly namespace: string | undefined;
  /** The wire of the last response: `protobuf` or `json` (a custom resource asked for protobuf answers JSON). */
  lastWire: "json" | "protobuf" | undefined;
  private readonly path: string;
  private codec: ProtobufCodec | undefined;

  constructor(
    private readonly kubeConfig: KubeConfigLike,
    resource: Resource<T>,
    private readonly options: KubeListerWatcherOptions = {},
  ) {
    assertResource(resource, "KubeListerWatcher");
    this.handle = resource;
    this.resource = describeResource(resource);
    this.namespace = resource.scope === "Namespaced" && options.namespace ? options.namespace : undefined;
    this.path = collectionPath(resource, this.namespace);
    this.codec = options.protobufCodec;
  }

  private get decodeOptions(): DecodeOptions {
    return { omitManagedFields: this.options.stripManagedFields === true };
  }

  private get protobuf(): ProtobufCodec {
    this.codec ??= new ProtobufCodec();
    return this.codec;
  }

  private accept(verb: "list" | "watch"): string {
    const given = this.options.accept?.[verb];
    if (given) return given;
    if (this.options.wire !== "protobuf") return JSON_MEDIA_TYPE;
    // The server answers every built-in kind in protobuf, also those the
    // decoder has no message for (CustomResourceDefinitions, APIServices):
    // those are asked for in JSON.
    const { apiVersion, kind } = this.handle;
    return this.protobuf.messageFor(apiVersion, `${kind}List`) ? PROTOBUF_FIRST : JSON_MEDIA_TYPE;
  }

  async list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    const context = this.context("list");
    const idleMs = this.options.listIdleTimeoutMs ?? 60_000;
    const res = await this.open(
      context,
      this.accept("list"),
      toQueryString(this.withDefaults(options), false),
      signal,
      idleMs,
    );
    const body = await readBody(res, responseBody(res, context), context, Number.POSITIVE_INFINITY, signal);
    this.lastWire = isProtobuf(res) ? "protobuf" : "json";
    if (this.lastWire === "protobuf") {
      try {
        return this.protobuf.decodeList<T>(body, this.decodeOptions);
      } catch (err) {
        throw new StreamDecodeError(context, toError(err).message, body.toString("hex", 0, 100), err);
      }
    }
    const list = decodeListBody<T>(body, context);
    if (this.options.stripManagedFields) for (const item of list.items) dropManagedFields(item);
    return list;
  }

  async watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    const context = this.context("watch");
    const res = await this.open(
      context,
      this.accept("watch"),
      toQueryString(this.withDefaults(options), true),
      signal,
    );
    this.lastWire = isProtobuf(res) ? "protobuf" : "json";
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        res.destroy();
        reject(toError(err));
      };
      const onAbort = (): void => fail(signal?.reason);
      if (signal?.aborted) return fail(signal.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      let body: Readable;
      try {
        body = responseBody(res, context);
      } catch (err) {
        return fail(err);
      }
      const strip = this.options.stripManagedFields === true;
      const decoder =
        this.lastWire === "protobuf"
          ? protobufWatchDecoder(this.protobuf, this.decodeOptions, context, (value) =>
              onEvent(toWatchEvent<T>(value, context)),
            )
          : new NdjsonDecoder(context, (value) => {
              const event = toWatchEvent<T>(value, context);
              if (strip) dropManagedFields(event.object);
              onEvent(event);
            });
      body.on("data", (chunk: Buffer) => {
        if (settled) return;
        try {
          decoder.write(chunk);
        } catch (err) {
          fail(err);
        }
      });
      body.on("end", () => {
        if (settled) return;
        try {
          decoder.end();
        } catch (err) {
          return fail(err);
        }
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      body.on("error", (err) =>
        fail(
          err instanceof ListWatchError
            ? err
            : new ConnectionError(context, `the watch stream broke: ${err.message}`, err),
        ),
      );
      res.on("close", () => {
        if (!res.complete) fail(new ConnectionError(context, "the watch stream was closed before its end"));
      });
    });
  }

  private withDefaults<O extends ListOptions | WatchOptions>(options: O): O {
    const { labelSelector, fieldSelector, shardSelector } = this.options;
    return {
      ...(labelSelector !== undefined ? { labelSelector } : {}),
      ...(fieldSelector !== undefined ? { fieldSelector } : {}),
      ...(shardSelector !== undefined ? { shardSelector } : {}),
      ...options,
    };
  }

  private context(verb: ListWatchVerb): ListWatchErrorContext {
    return this.namespace === undefined
      ? { resource: this.resource, verb }
      : { resource: this.resource, verb, namespace: this.namespace };
  }

  /** Sends the GET and resolves with a 2xx response; any other answer rejects with its Status. */
  private async open(
    context: ListWatchErrorContext,
    accept: string,
    query: string,
    signal?: AbortSignal,
    idleTimeoutMs?: number,
  ): Promise<IncomingMessage> {
    // The codec holds the messages of the kinds it has been asked for: the resource's
    // (its objects, its list) are loaded before its first request that may answer in protobuf.
    if (accept === PROTOBUF_FIRST) {
      const { apiVersion, kind } = this.handle;
      await this.protobuf.load(apiVersion, [kind, `${kind}List`]);
    }
    let res: IncomingMessage;
    try {
      res = await sendKubeRequest(this.kubeConfig, {
        method: "GET",
        path: this.path,
        query,
        headers: { Accept: accept, ...acceptEncoding(this.options.compression) },
        signal,
        idleTimeoutMs,
      });
    } catch (err) {
      if (!(err instanceof KubeRequestError)) throw err;
      throw new ConnectionError(context, err.message, err.cause ?? err);
    }
    const code = res.statusCode ?? 0;
    if (code >= 200 && code < 300) return res;
    throw await errorFromResponse(res, context, signal, () => this.protobuf);
  }
}

/** Deletes `metadata.managedFields` from a decoded JSON object (a watch event's object may be a Status). */
function dropManagedFields(object: unknown): void {
  const metadata = (object as { metadata?: { managedFields?: unknown } } | null)?.metadata;
  if (metadata && typeof metadata === "object") delete metadata.managedFields;
}

async function errorFromResponse(
  res: IncomingMessage,
  context: ListWatchErrorContext,
  signal: AbortSignal | undefined,
  codec: () => ProtobufCodec,
): Promise<ListWatchError> {
  const code = res.statusCode ?? 0;
  let body = "";
  try {
    // latin1 keeps every byte, so a protobuf Status survives the string.
    body = (await readBody(res, responseBody(res, context), context, MAX_ERROR_BODY_BYTES, signal)).toString(
      isProtobuf(res) ? "latin1" : "utf8",
    );
  } catch {
    // The status line says enough.
  }
  let status: Status | undefined;
  try {
    const parsed = (
      isProtobuf(res) ? codec().decodeStatus(Buffer.from(body, "latin1")) : JSON.parse(body)
    ) as Status;
    if (parsed && typeof parsed === "object" && parsed.kind === "Status") status = parsed;
  } catch {
    // Not a Status: keep the text.
  }
  const reason = status?.reason || statusReasonForHttpCode(code);
  const message = status?.message || body.trim().slice(0, 500) || res.statusMessage || "no message";
  return new ApiStatusError(context, status?.code || code, reason, message, status, "response");
}

/**
 * The protobuf counterpart of the NDJSON decoder: frames to events. Bytes
 * that do not decode are a StreamDecodeError naming the resource and verb;
 * what the event handler throws passes through unchanged.
 */
function protobufWatchDecoder(
  codec: ProtobufCodec,
  options: DecodeOptions,
  context: ListWatchErrorContext,
  onValue: (value: unknown) => void,
): { write(chunk: Buffer): void; end(): void } {
  const asDecodeError = (err: unknown, frame?: Buffer) =>
    err instanceof ProtobufDecodeError
      ? new StreamDecodeError(context, err.message, frame ? frame.toString("hex", 0, 100) : "", err)
      : err;
  const frames = new LengthDelimitedFrames((frame) => {
    let event: { type: string; object: unknown };
    try {
      event = codec.decodeWatchEvent(frame, options);
    } catch (err) {
      throw asDecodeError(err, frame);
    }
    onValue(event);
  });
  const guarded = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      throw asDecodeError(err);
    }
  };
  return { write: (chunk) => guarded(() => frames.write(chunk)), end: () => guarded(() => frames.end()) };
}
