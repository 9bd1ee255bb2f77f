import { KubeListerWatcher, type KubeListerWatcherOptions } from "@tessera/reflector";
import { type KubeConfigLike, type Resource } from "@tessera/client";
import {
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  metadataResource,
  type PartialObjectMetadata,
} from "./partial-object-metadata.js";

/**
 * A {@link KubeListerWatcher} that asks the server for metadata only: LISTs with
 * `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
 * and WATCHes with `as=PartialObjectMetadata`, so a collection whose bodies
 * are large (Secrets, ConfigMaps, Pods) is cached at the cost of its metadata.
 * Same contract, authentication and error types as `KubeListerWatcher`; plain
 * JSON is accepted as the fallback, so a server without the metadata
 * conversion still answers (with whole objects). Takes the handle of any
 * resource; its own `handle` is that resource viewed as
 * `Resource<PartialObjectMetadata>` (see {@link metadataResource}).
 *
 * ```ts
 * const lw = new MetadataListerWatcher(kc, Secrets);
 * const informer = new SharedIndexInformer({ listerWatcher: lw }); // SharedIndexInformer<PartialObjectMetadata>
 * ```
 */
export class MetadataListerWatcher extends KubeListerWatcher<PartialObjectMetadata> {
  /** `options.accept`, if given, is replaced by the metadata media types. */
  constructor(kubeConfig: KubeConfigLike, resource: Resource, options: KubeListerWatcherOptions = {}) {
    super(kubeConfig, metadataResource(resource), {
      ...options,
      accept: { list: METADATA_LIST_ACCEPT, watch: METADATA_WATCH_ACCEPT },
    });
  }
}
