import type { StatusCause } from "@tessera/client";

/** A field and what is wrong with it: `{ field: "spec.replicas", message: "must be at least 1" }`. */
export interface FieldCause {
  /** The field's path as the API names it, e.g. `spec.replicas` or `spec.containers[0].image`. */
  readonly field: string;
  readonly message: string;
  /** The API's cause type; default `FieldValueInvalid`. */
  readonly reason?:
    | "FieldValueInvalid"
    | "FieldValueRequired"
    | "FieldValueForbidden"
    | "FieldValueNotSupported"
    | "FieldValueDuplicate"
    | (string & {});
}

/** What a validation returns: allowed (perhaps with warnings), or denied with a message and causes. */
export type AdmissionResult =
  | { readonly allowed: true; readonly warnings: readonly string[] }
  | {
      readonly allowed: false;
      readonly message: string;
      /** HTTP status of the refusal the client sees; 403 by default (controller-runtime's), 422 with field causes. */
      readonly code: number;
      readonly causes: readonly StatusCause[];
      readonly warnings: readonly string[];
    };

/** Options of `Admission.deny`. */
export interface DenyOptions {
  /** The fields at fault: the client's error lists them (`kubectl` prints each). */
  readonly causes?: readonly FieldCause[];
  readonly warnings?: readonly string[];
  /**
   * The HTTP status the client gets: default 422 (Invalid) when causes are
   * given, as the API server's own validation answers, else 403 (Forbidden),
   * as controller-runtime's `Denied`.
   */
  readonly code?: number;
}

/**
 * The results a webhook's `validate*()` returns. Returning nothing allows too.
 *
 * ```ts
 * if (widget.spec.replicas < 1) {
 *   return Admission.deny("a Widget needs a replica", {
 *     causes: [{ field: "spec.replicas", message: "must be at least 1" }],
 *   });
 * }
 * return Admission.allow({ warnings: widget.spec.replicas > 50 ? ["more than 50 replicas is slow"] : [] });
 * ```
 */
export const Admission = Object.freeze({
  /** Lets the request through, with warnings for the client (each shown as a `Warning` header). */
  allow(options: { readonly warnings?: readonly string[] } = {}): AdmissionResult {
    return { allowed: true, warnings: options.warnings ?? [] };
  },
  /** Refuses the request with `message`; the client gets it as the error, with the causes. */
  deny(message: string, options: DenyOptions = {}): AdmissionResult {
    const causes = (options.causes ?? []).map((c) => ({
      reason: c.reason ?? "FieldValueInvalid",
      message: c.message,
      field: c.field,
    }));
    return {
      allowed: false,
      message,
      code: options.code ?? (causes.length > 0 ? 422 : 403),
      causes,
      warnings: options.warnings ?? [],
    };
  },
});
