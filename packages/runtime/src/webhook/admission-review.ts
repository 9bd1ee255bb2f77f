import type { KubeObject, StatusCause } from "@tessera/client";
import type { AdmissionOperation } from "./webhook-definition.js";
import { WebhookRequestError } from "./webhook-request-error.js";

/** The API version of the reviews Tessera serves; the API server sends it when the configuration lists `admissionReviewVersions: ["v1"]`. */
export const ADMISSION_REVIEW_API_VERSION = "admission.k8s.io/v1";

/** Who made the request being admitted (authentication.k8s.io/v1 UserInfo). */
export interface AdmissionUserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The request of an AdmissionReview v1, typed over the kind admitted. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Echoed in the response: the API server matches the answer by it. */
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subResource?: string;
  readonly requestKind?: { readonly group: string; readonly version: string; readonly kind: string };
  readonly requestResource?: { readonly group: string; readonly version: string; readonly resource: string };
  readonly name?: string;
  readonly namespace?: string;
  /** `CONNECT` too, which Tessera's webhooks are never registered for. */
  readonly operation: AdmissionOperation | "CONNECT";
  readonly userInfo: AdmissionUserInfo;
  /** The object as it would be stored: absent (null) for DELETE. */
  readonly object?: T | null;
  /** The object stored before: for UPDATE and DELETE. */
  readonly oldObject?: T | null;
  /** True when the request will not be persisted (`kubectl --dry-run=server`): a webhook with side effects must skip them. */
  readonly dryRun?: boolean;
  /** The operation's options (CreateOptions, UpdateOptions, DeleteOptions). */
  readonly options?: Readonly<Record<string, unknown>>;
}

/** The `result` of a refused admission: a metav1.Status in short. */
export interface AdmissionStatus {
  readonly code?: number;
  readonly message?: string;
  readonly reason?: string;
  readonly details?: { readonly causes?: readonly StatusCause[] };
}

/** The response of an AdmissionReview v1. */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  /** Base64 of an RFC 6902 JSON patch; `patchType` says so. */
  readonly patch?: string;
  readonly patchType?: "JSONPatch";
  /** Shown to the client (the `Warning` header, kubectl prints them); each at most 256 characters is kept readable. */
  readonly warnings?: readonly string[];
}

/** An AdmissionReview v1, as sent (with `request`) and as answered (with `response`). */
export interface AdmissionReview<T extends KubeObject = KubeObject> {
  readonly apiVersion: typeof ADMISSION_REVIEW_API_VERSION;
  readonly kind: "AdmissionReview";
  readonly request?: AdmissionRequest<T>;
  readonly response?: AdmissionResponse;
}

const OPERATIONS: ReadonlySet<string> = new Set(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

/**
 * The request of an AdmissionReview body, checked as far as the webhook
 * relies on it: JSON, `admission.k8s.io/v1` (a configuration that lists
 * only `v1beta1` is named as the fix), a request with a uid, an operation,
 * and objects that are objects. Throws a {@link WebhookRequestError} (HTTP
 * 400) saying what is wrong; never anything else, whatever the input.
 */
export function decodeAdmissionReview(body: string): AdmissionRequest {
  const review = parseJsonObject(body, "an AdmissionReview");
  if (review["apiVersion"] !== ADMISSION_REVIEW_API_VERSION || review["kind"] !== "AdmissionReview") {
    throw new WebhookRequestError(
      400,
      `expected an AdmissionReview of ${ADMISSION_REVIEW_API_VERSION}, got kind ${describe(review["kind"])} of apiVersion ${describe(review["apiVersion"])}; ` +
        `list "v1" in the webhook configuration's admissionReviewVersions`,
    );
  }
  const request = review["request"];
  if (!isObject(request)) {
    throw new WebhookRequestError(400, "the AdmissionReview has no request object");
  }
  const uid = request["uid"];
  if (typeof uid !== "string" || uid === "") {
    throw new WebhookRequestError(400, "the AdmissionReview's request has no uid");
  }
  const operation = request["operation"];
  if (typeof operation !== "string" || !OPERATIONS.has(operation)) {
    throw new WebhookRequestError(
      400,
      `the AdmissionReview's request has operation ${describe(operation)}, not CREATE, UPDATE, DELETE or CONNECT`,
      uid,
    );
  }
  for (const field of ["object", "oldObject"] as const) {
    const value = request[field];
    if (value !== undefined && value !== null && !isObject(value)) {
      throw new WebhookRequestError(400, `the AdmissionReview's request.${field} is not an object`, uid);
    }
  }
  for (const field of ["kind", "resource"] as const) {
    if (!isObject(request[field])) {
      throw new WebhookRequestError(400, `the AdmissionReview's request.${field} is not an object`, uid);
    }
  }
  if (request["userInfo"] !== undefined && !isObject(request["userInfo"])) {
    throw new WebhookRequestError(400, "the AdmissionReview's request.userInfo is not an object", uid);
  }
  return { userInfo: {}, ...request } as unknown as AdmissionRequest;
}

/** The AdmissionReview that carries `response`. */
export function admissionReviewOf(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_REVIEW_API_VERSION, kind: "AdmissionReview", response };
}

/** `body` parsed as a JSON object, else a {@link WebhookRequestError} naming `what` was expected. */
export function parseJsonObject(body: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new WebhookRequestError(
      400,
      `the body is not JSON (${(error as Error).message}); expected ${what}`,
    );
  }
  if (!isObject(parsed)) {
    throw new WebhookRequestError(400, `the body is JSON ${describe(parsed)}, not ${what} object`);
  }
  return parsed;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A value for a message, cut short. */
export function describe(value: unknown): string {
  if (value === undefined) return "none";
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
