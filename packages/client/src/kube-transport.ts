import { Agent as HttpsAgent } from "node:https";
import { toError } from "@tessera/core";
import { KubeRequestError, requestKubeJson } from "./kube-request.js";
import { statusReasonForHttpCode } from "./status-reason.js";
import { type KubeConfigLike } from "./kube-config-like.js";
import { type Status } from "./kube-object.js";
import { ApiError, apiErrorFor, type ApiErrorContext } from "./api-error.js";

/** One JSON call of a {@link KubeTransport}. */
export interface TransportRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  signal?: AbortSignal | undefined;
}

/** A call failed below HTTP: no connection, credentials that could not be applied. */
export class TransportError extends ApiError {
  override name = "TransportError";
}

/**
 * JSON over HTTP to the API server of a KubeConfigLike, on a keep-alive
 * connection pool, with every error an {@link ApiError} naming the verb,
 * resource and object. Credentials come from the KubeConfigLike per request (see
 * `sendKubeRequest`), so every auth route of the KubeConfig works.
 */
export class KubeTransport {
  private readonly agent = new HttpsAgent({ keepAlive: true, maxSockets: 32 });

  constructor(readonly kubeConfig: KubeConfigLike) {}

  /** Sends `request`; resolves with the parsed body of a 2xx, else rejects with an {@link ApiError}. */
  async call<T>(context: ApiErrorContext, request: TransportRequest): Promise<T> {
    let answer;
    try {
      answer = await requestKubeJson<T>(this.kubeConfig, {
        method: request.method,
        path: request.path,
        query: request.query?.toString() ?? "",
        ...(request.body !== undefined ? { body: request.body } : {}),
        ...(request.contentType !== undefined ? { contentType: request.contentType } : {}),
        signal: request.signal,
        agent: this.agent,
        idleTimeoutMs: 60_000,
      });
    } catch (err) {
      if (!(err instanceof KubeRequestError)) throw toError(err);
      throw new TransportError(context, 0, "ConnectionFailed", err.message);
    }
    const { code, value } = answer;
    if (code >= 200 && code < 300) return value as T;
    const status = (value as Status | undefined)?.kind === "Status" ? (value as Status) : undefined;
    const reason = status?.reason || statusReasonForHttpCode(code);
    const message = status?.message || answer.text.trim().slice(0, 500) || "no message";
    throw apiErrorFor(context, code, reason, message, status);
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent.destroy();
  }
}
