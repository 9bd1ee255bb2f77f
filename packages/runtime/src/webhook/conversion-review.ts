import type { KubeObject } from "@tessera/client";
import { describe, isObject, parseJsonObject } from "./admission-review.js";
import { WebhookRequestError } from "./webhook-request-error.js";

/** The API version of the conversion reviews Tessera serves (`conversionReviewVersions: ["v1"]` in the CRD). */
export const CONVERSION_REVIEW_API_VERSION = "apiextensions.k8s.io/v1";

/** The request of a ConversionReview v1: objects to convert to `desiredAPIVersion`. */
export interface ConversionRequest {
  readonly uid: string;
  /** `<group>/<version>`, e.g. `example.com/v1`. */
  readonly desiredAPIVersion: string;
  readonly objects: readonly KubeObject[];
}

/** The response of a ConversionReview v1: every object converted, in order, or a failure. */
export interface ConversionResponse {
  readonly uid: string;
  readonly convertedObjects: readonly KubeObject[];
  readonly result: { readonly status: "Success" } | { readonly status: "Failure"; readonly message: string };
}

/** A ConversionReview v1, as sent (with `request`) and as answered (with `response`). */
export interface ConversionReview {
  readonly apiVersion: typeof CONVERSION_REVIEW_API_VERSION;
  readonly kind: "ConversionReview";
  readonly request?: ConversionRequest;
  readonly response?: ConversionResponse;
}

/**
 * The request of a ConversionReview body, checked as far as the converter
 * relies on it: JSON, `apiextensions.k8s.io/v1`, a uid, a desired
 * `group/version`, and objects that each have an `apiVersion` and a `kind`.
 * Throws a {@link WebhookRequestError} (HTTP 400) saying what is wrong;
 * never anything else, whatever the input.
 */
export function decodeConversionReview(body: string): ConversionRequest {
  const review = parseJsonObject(body, "a ConversionReview");
  if (review["apiVersion"] !== CONVERSION_REVIEW_API_VERSION || review["kind"] !== "ConversionReview") {
    throw new WebhookRequestError(
      400,
      `expected a ConversionReview of ${CONVERSION_REVIEW_API_VERSION}, got kind ${describe(review["kind"])} of apiVersion ${describe(review["apiVersion"])}; ` +
        `list "v1" in the CRD's spec.conversion.webhook.conversionReviewVersions`,
    );
  }
  const request = review["request"];
  if (!isObject(request)) throw new WebhookRequestError(400, "the ConversionReview has no request object");
  const uid = request["uid"];
  if (typeof uid !== "string" || uid === "") {
    throw new WebhookRequestError(400, "the ConversionReview's request has no uid");
  }
  const desired = request["desiredAPIVersion"];
  if (typeof desired !== "string" || !/^[^/\s]+\/[^/\s]+$/.test(desired)) {
    throw new WebhookRequestError(
      400,
      `the ConversionReview's desiredAPIVersion is ${describe(desired)}, not "<group>/<version>"`,
      uid,
    );
  }
  const objects = request["objects"];
  if (!Array.isArray(objects)) {
    throw new WebhookRequestError(400, "the ConversionReview's request.objects is not a list", uid);
  }
  objects.forEach((object: unknown, index) => {
    if (!isObject(object) || typeof object["apiVersion"] !== "string" || typeof object["kind"] !== "string") {
      throw new WebhookRequestError(
        400,
        `the ConversionReview's request.objects[${index}] is not an object with an apiVersion and a kind`,
        uid,
      );
    }
  });
  return { uid, desiredAPIVersion: desired, objects: objects as KubeObject[] };
}

/** The ConversionReview that carries `response`. */
export function conversionReviewOf(response: ConversionResponse): ConversionReview {
  return { apiVersion: CONVERSION_REVIEW_API_VERSION, kind: "ConversionReview", response };
}
