import type { KubeObject, ObjectMeta, Resource } from "@tessera/client";

/**
 * An object with its metadata only (`meta.k8s.io/v1` `PartialObjectMetadata`):
 * what a metadata-only informer caches. No `spec`, `status` or `data`.
 */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** The Accept header of a LIST that asks for `PartialObjectMetadataList` (JSON as the fallback). */
export const METADATA_LIST_ACCEPT =
  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** The Accept header of a WATCH whose events carry `PartialObjectMetadata` (JSON as the fallback). */
export const METADATA_WATCH_ACCEPT =
  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/**
 * The handle of `resource` viewed as metadata only: the same resource (the
 * same frozen object), typed `Resource<PartialObjectMetadata>`, for what a
 * metadata-only lister-watcher or informer of it holds.
 */
export function metadataResource(resource: Resource): Resource<PartialObjectMetadata> {
  // Only the type changes (and a handle of KubeObject already is one of
  // PartialObjectMetadata): a handle's type parameter says how its objects
  // are viewed, and the server sends metadata only when asked (Accept header).
  return resource;
}
