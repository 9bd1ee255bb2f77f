import { Agent as HttpsAgent } from "node:https";
import type { Meter } from "@opentelemetry/api";
import { isNoopMeter, resolveInstrumentation, toError, type Clock } from "@tessera/core";
import { KubeRequestError, requestKubeJson, type KubeJsonResponse } from "./kube-request.js";
import { statusReasonForHttpCode } from "./status-reason.js";
import { type KubeConfigLike } from "./kube-config-like.js";
import { type Status } from "./kube-object.js";
import { ApiError, apiErrorFor, type ApiErrorContext } from "./api-error.js";
import { RequestMetrics } from "./request-metrics.js";

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

/** Options of a {@link KubeTransport}. */
export interface KubeTransportOptions {
  /**
   * Most connections open to the server at once (the keep-alive pool's
   * size); default 32. A Lease holder keeps a transport of its own with a
   * pool of one or two, so a renewal never queues behind other traffic nor
   * pays a new TLS handshake against its renew deadline.
   */
  maxSockets?: number;
  /**
   * Where client-go's request metrics are recorded for every call:
   * `rest_client_requests_total` {code, method, host} (`code` is `<error>`
   * when no answer came) and `rest_client_request_duration_seconds` {verb,
   * host}; default the global meter `@tessera/client`, a no-op until an SDK
   * is registered.
   */
  meter?: Meter;
  /** Times the requests for the duration histogram; default the system clock. */
  clock?: Clock;
  /**
   * Called with each warning the API server sends (its `Warning` headers:
   * a deprecated API, an admission webhook's warnings), and the call it
   * came with, as client-go's `WarningHandler`; default: none.
   */
  onWarning?: (warning: string, context: ApiErrorContext) => void;
}

/** A call failed below HTTP (no connection, credentials that could not be applied): `code` 0. */
export class TransportError extends ApiError {
  override name = "TransportError";
}

/**
 * JSON over HTTP to the API server of a KubeConfigLike, on a keep-alive
 * connection pool, with every error an {@link ApiError} naming the verb,
 * resource and object, and every call counted in client-go's request
 * metrics. Credentials come from the KubeConfigLike per request (see
 * `sendKubeRequest`), so every auth route of the KubeConfig works.
 */
export class KubeTransport {
  private readonly agent: HttpsAgent;
  private readonly clock: Clock;
  /** Absent for the no-op meter: then no clock readings either. */
  private readonly metrics: RequestMetrics | undefined;
  /** The `host` label, computed once per server URL. */
  private host: { server: string; host: string } | undefined;
  private readonly onWarning: ((warning: string, context: ApiErrorContext) => void) | undefined;

  constructor(
    readonly kubeConfig: KubeConfigLike,
    options: KubeTransportOptions = {},
  ) {
    this.agent = new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 32 });
    const tools = resolveInstrumentation(options, "@tessera/client");
    this.clock = tools.clock;
    this.metrics = isNoopMeter(tools.meter) ? undefined : new RequestMetrics(tools.meter);
    this.onWarning = options.onWarning;
  }

  /** Sends `request`; resolves with the parsed body of a 2xx, else rejects with an {@link ApiError}. */
  async call<T>(context: ApiErrorContext, request: TransportRequest): Promise<T> {
    let answer: KubeJsonResponse<T> | undefined;
    const start = this.metrics ? this.clock.now() : 0;
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
      throw new TransportError(context, 0, "ConnectionFailed", err.message, undefined, { cause: err });
    } finally {
      this.metrics?.record(request.method, this.hostLabel(), answer?.code, (this.clock.now() - start) / 1000);
    }
    const { code, value } = answer;
    if (this.onWarning) for (const warning of answer.warnings) this.onWarning(warning, context);
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

  /** The server's `host:port`, as client-go labels its request metrics; `none` without a cluster. */
  private hostLabel(): string {
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (server === undefined) return "none";
    if (this.host?.server !== server) {
      let host: string;
      try {
        host = new URL(server).host;
      } catch {
        host = "none";
      }
      this.host = { server, host };
    }
    return this.host.host;
  }
}
