import {
  apiErrorFor,
  describeResource,
  type ApiError,
  type ApiErrorContext,
  type Resource,
  type Status,
  type StatusCause,
} from "@tessera/client";

/**
 * The errors the real API server answers with, built as the `ApiClient`
 * builds them from its `Status`: same class, code, reason and message. For
 * the fake client, and for interceptors that fail a call as the server would
 * (`throw serverErrors.conflict(call.context, Widgets, "a")`).
 */
export const serverErrors = {
  /** 404: `widgets.example.com "a" not found`. */
  notFound(context: ApiErrorContext, resource: Resource, name: string): ApiError {
    return fail(
      context,
      resource,
      name,
      404,
      "NotFound",
      `${describeResource(resource)} "${name}" not found`,
    );
  },
  /** 409 AlreadyExists: `widgets.example.com "a" already exists`. */
  alreadyExists(context: ApiErrorContext, resource: Resource, name: string): ApiError {
    return fail(
      context,
      resource,
      name,
      409,
      "AlreadyExists",
      `${describeResource(resource)} "${name}" already exists`,
    );
  },
  /** 409 Conflict of a write that quoted a stale resourceVersion. */
  conflict(context: ApiErrorContext, resource: Resource, name: string): ApiError {
    return fail(
      context,
      resource,
      name,
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${describeResource(resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  },
  /** 422 Invalid with the fields at fault: `Widget.example.com "a" is invalid: <field>: <message>`. */
  invalid(
    context: ApiErrorContext,
    resource: Resource,
    name: string,
    causes: readonly { field: string; type: string; message: string }[],
    /** The causes of the Status, when the server repeats some (it does for a few checks). */
    statusCauses: readonly { field: string; type: string; message: string }[] = causes,
    /** How the message names the kind: `Widget.example.com` for most checks, `widgets.example.com` for some. */
    kind: string = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`,
  ): ApiError {
    const detail = causes.map((c) => `${c.field}: ${c.message}`);
    const message = `${kind} "${name}" is invalid: ${detail.length === 1 ? detail[0] : `[${detail.join(", ")}]`}`;
    return fail(
      context,
      resource,
      name,
      422,
      "Invalid",
      message,
      statusCauses.map((c) => ({ reason: c.type, message: c.message, field: c.field })),
      resource.kind,
    );
  },
  /** 422 of a patch the server could not apply (a failed JSON-patch `test`, a missing path). */
  patchFailed(context: ApiErrorContext, resource: Resource, name: string, _message: string): ApiError {
    return fail(
      context,
      resource,
      name,
      422,
      "Invalid",
      // The server drops the patch library's reason (`message`) from its answer.
      "the server rejected our request due to an error in our request",
      undefined,
      "",
      "",
    );
  },
  /**
   * 409 Conflict of a server-side apply that sets fields other managers own;
   * each `manager` as the server prints it (`"name"`, or `"name" using v1 at <time>` for an update).
   */
  applyConflict(
    context: ApiErrorContext,
    resource: Resource,
    name: string,
    conflicts: readonly { manager: string; field: string }[],
  ): ApiError {
    const n = conflicts.length;
    let message: string;
    if (n === 1) {
      message = `conflict with ${conflicts[0]!.manager}: ${conflicts[0]!.field}`;
    } else {
      const managers = [...new Set(conflicts.map((c) => c.manager))].sort();
      message = managers
        .flatMap((m) => [
          `conflicts with ${m}:`,
          ...conflicts.filter((c) => c.manager === m).map((c) => `- ${c.field}`),
        ])
        .join("\n");
    }
    return fail(
      context,
      resource,
      name,
      409,
      "Conflict",
      `Apply failed with ${n} conflict${n === 1 ? "" : "s"}: ${message}`,
      conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with ${c.manager}`,
        field: c.field,
      })),
      "",
      "",
    );
  },
  /** 404 of a resource the server does not serve: its answer is a plain-text page, no Status. */
  noSuchResource(context: ApiErrorContext): ApiError {
    return apiErrorFor(context, 404, "NotFound", "404 page not found");
  },
  /** 409 of a delete whose precondition (`uid` or `resourceVersion`) the stored object fails. */
  preconditionFailed(
    context: ApiErrorContext,
    resource: Resource,
    name: string,
    field: "UID" | "ResourceVersion",
    wanted: string,
    found: string,
  ): ApiError {
    const kind = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`;
    const why = field === "UID" ? "deleted and then recreated" : "modified";
    return fail(
      context,
      resource,
      name,
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${kind} "${name}": the ${field} in the precondition (${wanted}) does not match the ${field} in record (${found}). The object might have been ${why}`,
      undefined,
      resource.kind,
    );
  },
};

function fail(
  context: ApiErrorContext,
  resource: Resource,
  name: string,
  code: number,
  reason: string,
  message: string,
  causes?: StatusCause[],
  kind: string = resource.plural,
  group: string = resource.group,
): ApiError {
  const status: Status = {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    message,
    reason,
    details: { name, group, kind, ...(causes ? { causes: causes.map((c) => ({ ...c })) } : {}) },
    code,
  };
  return apiErrorFor(context, code, reason, message, status);
}
