/**
 * @tessera/informers: one reflector per collection, shared by every handler
 * that needs it, with indexes, listers, bucketed resync, metadata-only
 * watches and memory-saving transforms; and the factory that owns them.
 */
export { SharedIndexInformer, InformerStateError } from "./shared-index-informer.js";
export type { SharedIndexInformerOptions, InformerReflectorOptions } from "./shared-index-informer.js";
export type { InformerSource, InformerSourceFactory } from "./informer-source.js";
export type { ResourceEventHandler, EventHandlerOptions, Notification } from "./resource-event-handler.js";
export type { HandlerRegistration } from "./handler-registration.js";
export { ResyncScheduler, ResyncSchedule, RESYNC_BUCKET_MS, RESYNC_TICK_JITTER } from "./resync-scheduler.js";
export type { ResyncSchedulerOptions, ResyncTick } from "./resync-scheduler.js";
export { Lister, NamespaceLister } from "./lister.js";
export { CompactStore, DEFAULT_HOT_OBJECTS } from "./compact-store.js";
export type { CompactCacheOptions, CompactEntryMetadata } from "./compact-store.js";
export type { LabelMatch } from "./label-match.js";
export { indexByLabel, indexByOwnerUid, indexByControllerUid } from "./index-funcs.js";
export { stripManagedFields, stripLastAppliedConfiguration, composeTransforms } from "./transforms.js";
export type { Transform } from "./transforms.js";
export { SharedInformerFactory, FactoryStateError } from "./shared-informer-factory.js";
export type {
  SharedInformerFactoryOptions,
  InformerOptions,
  ListerWatcherRequest,
} from "./shared-informer-factory.js";
export { CacheSyncError } from "./cache-sync-error.js";
export type { UnsyncedInformer } from "./cache-sync-error.js";
export { MetadataListerWatcher } from "./metadata-lister-watcher.js";
export { METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT, metadataResource } from "./partial-object-metadata.js";
export type { PartialObjectMetadata } from "./partial-object-metadata.js";
