/**
 * @tessera/client: the one layer that talks to the Kubernetes API server.
 * Kubeconfig loading (lean, with client-node loaded only for exec and
 * auth-provider users), the HTTP transport, typed resource handles for every
 * kind, the object and metadata types, the {@link Client} with its
 * uncached {@link ApiReader}, the REST mapper, and one {@link ApiError}
 * family for every failure. Leader election, sharding and the runtime send
 * their requests through it; the reflector uses its transport for list and
 * watch streams.
 */
export type { KubeObject, ObjectMeta, OwnerReference, ObjectList, ListMeta, Status } from "./kube-object.js";
export { metadataOf } from "./object-metadata.js";
export type { KubeConfigLike } from "./kube-config-like.js";
export {
  defineResource,
  assertResource,
  collectionPath,
  describeResource,
  ResourceDefinitionError,
} from "./resource.js";
export type { Resource, ResourceSpec, ResourceScope } from "./resource.js";
export * from "./resources.js";
export {
  sendKubeRequest,
  readKubeResponse,
  requestKubeJson,
  describeKubeFailure,
  KubeRequestError,
} from "./kube-request.js";
export type { KubeRequest, KubeJsonRequest, KubeJsonResponse } from "./kube-request.js";
export { statusReasonForHttpCode } from "./status-reason.js";
export { formatMicroTime, formatKubeTime, parseKubeTime } from "./micro-time.js";
export type {
  Client,
  ApiReader,
  ReadOptions,
  ObjectRef,
  ListOptions,
  WriteOptions,
  Patch,
  JsonPatchOperation,
  ApplyOptions,
  DeleteOptions,
  ApplyConfiguration,
} from "./client.js";
export { ApiClient } from "./api-client.js";
export type { ApiClientOptions } from "./api-client.js";
export { KubeTransport, TransportError } from "./kube-transport.js";
export type { TransportRequest, KubeTransportOptions } from "./kube-transport.js";
export {
  ApiError,
  NotFoundError,
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  ForbiddenError,
  UnauthorizedError,
  apiErrorFor,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isForbidden,
  isUnauthorized,
} from "./api-error.js";
export type { ApiErrorContext, StatusCause } from "./api-error.js";
export type { RestMapper, GroupVersionKind } from "./rest-mapper.js";
export { DiscoveryRestMapper, KindNotFoundError } from "./discovery-rest-mapper.js";
export { labelMatcher, labelSelectorString, LabelSelectorError } from "./label-selector.js";
export type { LabelSelectorInput } from "./label-selector.js";
export { loadKubeConfig } from "./kubeconfig/load-kube-config.js";
export type { LoadKubeConfigOptions, LoadedKubeConfig } from "./kubeconfig/load-kube-config.js";
export { KubeConfigError } from "./kubeconfig/kubeconfig-error.js";
export { checkInsecureTLS } from "./kubeconfig/insecure-tls.js";
export { LeanKubeConfig } from "./kubeconfig/lean-kube-config.js";
export type { LeanCluster, LeanCredentials } from "./kubeconfig/lean-kube-config.js";
export { parseYaml } from "./parse-yaml.js";
