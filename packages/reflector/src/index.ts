/**
 * @tessera/reflector: keeps a local copy of one Kubernetes collection in step
 * with the API server. Watch-list first, LIST + WATCH as the verified
 * fallback, recovery from every way a watch ends.
 */
export { Reflector, ReflectorRunningError, MIN_WATCH_TIMEOUT_SECONDS } from "./reflector.js";
export type { ReflectorOptions, ReflectorHealth } from "./reflector.js";
export type { SyncMode } from "./reflector-metrics.js";

export type { ListerWatcher, WatchEventHandler } from "./lister-watcher.js";
export { KubeListerWatcher } from "./kube-lister-watcher.js";
export type { KubeListerWatcherOptions } from "./kube-lister-watcher.js";
export type { Compression } from "./response-body.js";
export {
  ProtobufCodec,
  ProtobufDecodeError,
  PROTOBUF_MAGIC,
  PROTOBUF_MEDIA_TYPE,
} from "./proto/protobuf-codec.js";
export type { DecodeOptions, Envelope } from "./proto/protobuf-codec.js";
export { LengthDelimitedFrames } from "./proto/length-delimited-frames.js";
export { formatGoDuration } from "./proto/go-duration.js";
export type { MessageShapes, FieldShape, TypeShape } from "./proto/shapes.js";
export { toQueryString } from "./list-options.js";
export type { ListOptions, WatchOptions } from "./list-options.js";
export { INITIAL_EVENTS_END_ANNOTATION, isInitialEventsEndBookmark } from "./watch-event.js";
export type { WatchEvent, WatchEventType } from "./watch-event.js";
export { NdjsonDecoder } from "./ndjson-decoder.js";

export {
  ListWatchError,
  ApiStatusError,
  ConnectionError,
  StreamDecodeError,
  WatchDeadlineError,
  WatchListInconsistencyError,
  isResourceExpired,
  hasStatusCode,
} from "./list-watch-error.js";
export type { ListWatchErrorContext, ListWatchVerb } from "./list-watch-error.js";

export { NAMESPACE_INDEX, indexByNamespace } from "./store.js";
export type {
  ReflectorStore,
  StagedReplace,
  KeyListerGetter,
  Store,
  Indexer,
  IndexFunc,
  Indexers,
} from "./store.js";
export { IndexedStore } from "./indexed-store.js";
export { IndexerError } from "./indexer-error.js";
export { IndexTable } from "./index-table.js";
export type { IndexedStoreOptions, IndexedStoreReplace } from "./indexed-store.js";
export { DeltaFIFO, FifoClosedError } from "./delta-fifo.js";
export type { DeltaFIFOOptions } from "./delta-fifo.js";
export { compressDeltas } from "./delta.js";
export type { Delta, DeltaBatch, DeltaType } from "./delta.js";
export { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
export { metaNamespaceKey, splitMetaNamespaceKey, ObjectKeyError } from "./object-key.js";
export type { KeyFunc } from "./object-key.js";

export { choosePageSize, listAllPages, DEFAULT_PAGE_SIZE } from "./pager.js";
export type { PageSizeInputs, PagedList } from "./pager.js";
