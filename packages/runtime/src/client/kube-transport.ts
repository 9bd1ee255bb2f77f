import { Agent as HttpsAgent } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { toError } from "@tessera/core";
import {
  KubeRequestError,
  readKubeResponse,
  sendKubeRequest,
  statusReasonForHttpCode,
  type Status,
} from "@tessera/reflector";
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
 * JSON over HTTP to the API server of a KubeConfig, on a keep-alive
 * connection pool, with every error an {@link ApiError} naming the verb,
 * resource and object. Credentials come from the KubeConfig per request (see
 * `sendKubeRequest`), so every auth route of client-node works.
 */
export class KubeTransport {
  private readonly agent = new HttpsAgent({ keepAlive: true, maxSockets: 32 });

  constructor(readonly kubeConfig: KubeConfig) {}

  /** Sends `request`; resolves with the parsed body of a 2xx, else rejects with an {@link ApiError}. */
  async call<T>(context: ApiErrorContext, request: TransportRequest): Promise<T> {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: Record<string, string> = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = request.contentType ?? "application/json";
    let text: string;
    let code: number;
    try {
      const res = await sendKubeRequest(this.kubeConfig, {
        method: request.method,
        path: request.path,
        query: request.query?.toString() ?? "",
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: request.signal,
        agent: this.agent,
        idleTimeoutMs: 60_000,
      });
      code = res.statusCode ?? 0;
      text = (await readKubeResponse(res, Number.POSITIVE_INFINITY, request.signal)).toString("utf8");
    } catch (err) {
      if (!(err instanceof KubeRequestError)) throw toError(err);
      throw new TransportError(context, 0, "ConnectionFailed", err.message);
    }
    if (code >= 200 && code < 300) return (text === "" ? undefined : JSON.parse(text)) as T;
    let status: Status | undefined;
    try {
      const parsed = JSON.parse(text) as Status;
      if (parsed && typeof parsed === "object" && parsed.kind === "Status") status = parsed;
    } catch {
      // Not a Status (a proxy's error page): keep the text.
    }
    const reason = status?.reason || statusReasonForHttpCode(code);
    const message = status?.message || text.trim().slice(0, 500) || "no message";
    throw apiErrorFor(context, code, reason, message, status);
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent.destroy();
  }
}
