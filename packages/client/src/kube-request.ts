import type { Agent as HttpAgent, IncomingMessage, RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import type { KubeConfigLike } from "./kube-config-like.js";
import { nodeHttp, toError } from "@tessera/core";

/** One HTTP request to the API server of a KubeConfig's current cluster. */
export interface KubeRequest {
  method: string;
  /** The path below the server's URL, e.g. `/api/v1/namespaces/default/configmaps`. */
  path: string;
  /** Encoded query string without `?`; empty for none. */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal | undefined;
  /** The request fails when its connection carries nothing for this long. */
  idleTimeoutMs?: number | undefined;
  /** Connection pool to use (keep-alive agents of the caller); default node's global agent. */
  agent?: HttpAgent | HttpsAgent;
}

/**
 * A failure below HTTP: no cluster in the KubeConfig, credentials that could
 * not be applied (an exec plugin that failed), a refused or broken
 * connection. Callers wrap it in their own error naming verb and resource.
 */
export class KubeRequestError extends Error {
  override name = "KubeRequestError";
}

/**
 * Sends `request` to the current cluster of `kubeConfig`, authenticated with
 * whatever its current user holds (client certificates, bearer tokens, token
 * files, exec and auth-provider plugins, refreshed per request through
 * `applyToHTTPSOptions`), and resolves with the response, whatever its
 * status, once its headers arrived; the caller reads the body. Rejects with
 * a {@link KubeRequestError}, or with the signal's reason on abort.
 */
export async function sendKubeRequest(
  kubeConfig: KubeConfigLike,
  request: KubeRequest,
): Promise<IncomingMessage> {
  const { signal } = request;
  signal?.throwIfAborted();
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new KubeRequestError("the KubeConfig has no current cluster");
  const query = request.query ? `?${request.query}` : "";
  const url = new URL(cluster.server.replace(/\/+$/, "") + request.path + query);
  const options: RequestOptions = { method: request.method, headers: { ...request.headers } };
  if (request.body !== undefined) {
    (options.headers as Record<string, string | number>)["Content-Length"] = Buffer.byteLength(request.body);
  }
  try {
    await kubeConfig.applyToHTTPSOptions(options);
  } catch (err) {
    throw new KubeRequestError(`could not apply the KubeConfig's credentials: ${toError(err).message}`, {
      cause: err,
    });
  }
  // client-node's applyToHTTPSOptions sets a new agent per request (a new TLS connection each time);
  // the caller's keep-alive pool replaces it, unless the cluster goes through a proxy (that agent is the proxy).
  if (request.agent && !(cluster as { proxyUrl?: string }).proxyUrl) options.agent = request.agent;
  signal?.throwIfAborted();
  const send = url.protocol === "http:" ? nodeHttp.request : httpsRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, options, resolve);
    const idle = request.idleTimeoutMs;
    if (idle !== undefined) {
      req.setTimeout(idle, () => req.destroy(new KubeRequestError(`nothing received for ${idle} ms`)));
    }
    const onAbort = (): void => {
      req.destroy();
      reject(toError(signal?.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("response", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", (err) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        signal?.aborted
          ? toError(signal.reason)
          : err instanceof KubeRequestError
            ? err
            : new KubeRequestError(`request failed: ${err.message}`, { cause: err }),
      );
    });
    req.end(request.body);
  });
}

/**
 * Reads a response's body, keeping at most `maxBytes` (the rest is drained).
 * `body` is what to read it from: the response itself, or a stream decoding
 * it (gunzip); an error that stream raises carries its own type, else it is
 * wrapped. Rejects with a {@link KubeRequestError} when the response breaks,
 * or with the signal's reason on abort.
 */
export function readKubeResponse(
  res: IncomingMessage,
  maxBytes = Number.POSITIVE_INFINITY,
  signal?: AbortSignal,
  body: Readable = res,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (err: unknown, value?: Buffer): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (err !== undefined) {
        res.destroy();
        if (body !== res) body.destroy();
        reject(toError(err));
      } else resolve(value as Buffer);
    };
    const onAbort = (): void => finish(signal?.reason);
    if (signal?.aborted) return finish(signal.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    body.on("data", (chunk: Buffer) => {
      if (bytes >= maxBytes) return;
      chunks.push(chunk);
      bytes += chunk.length;
    });
    body.on("end", () => finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    body.on("error", (err) =>
      finish(body === res ? new KubeRequestError(`the response broke: ${err.message}`, { cause: err }) : err),
    );
    if (body === res) {
      res.on("close", () => {
        if (!res.complete) finish(new KubeRequestError("the response was closed before its end"));
      });
    }
  });
}

/** A JSON call of {@link requestKubeJson}. */
export interface KubeJsonRequest extends Omit<KubeRequest, "body" | "headers"> {
  /** Sent as JSON. */
  body?: unknown;
  /** Default `application/json` when there is a body (a patch type for PATCH). */
  contentType?: string;
}

/** What the server answered to a {@link requestKubeJson}: the status code, the parsed JSON (or nothing) and the raw text. */
export interface KubeJsonResponse<T> {
  readonly code: number;
  readonly value: T | undefined;
  readonly text: string;
  /** The texts of the response's `Warning` headers (deprecations, admission webhooks' warnings), in order. */
  readonly warnings: readonly string[];
}

/**
 * The texts of `Warning` headers (RFC 7234: `299 - "text"`, several per
 * header or several headers), as the API server sends deprecation notices
 * and admission webhooks' warnings; a value that is not of that form is
 * kept whole.
 */
export function parseWarningHeaders(values: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const value of values) {
    const found = [...value.matchAll(/(\d{3}) (\S+) "((?:[^"\\]|\\.)*)"(?: "[^"]*")?/g)];
    if (found.length === 0) {
      if (value.trim() !== "") warnings.push(value.trim());
      continue;
    }
    for (const match of found) warnings.push(match[3]!.replace(/\\(.)/g, "$1"));
  }
  return warnings;
}

/**
 * One JSON request and its whole answer, whatever the status: for typed
 * clients (leases, the manager's client) that map status codes to their own
 * errors. Rejects only below HTTP ({@link KubeRequestError}) or on abort.
 */
export async function requestKubeJson<T>(
  kubeConfig: KubeConfigLike,
  request: KubeJsonRequest,
): Promise<KubeJsonResponse<T>> {
  const { body, contentType, ...rest } = request;
  const headers: Record<string, string> = { Accept: "application/json" };
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) headers["Content-Type"] = contentType ?? "application/json";
  const res = await sendKubeRequest(kubeConfig, {
    ...rest,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = (await readKubeResponse(res, Number.POSITIVE_INFINITY, request.signal)).toString("utf8");
  let value: T | undefined;
  try {
    value = text === "" ? undefined : (JSON.parse(text) as T);
  } catch {
    value = undefined; // not JSON (a proxy's error page): the caller has the text
  }
  const warnings = parseWarningHeaders(res.headersDistinct["warning"] ?? []);
  return { code: res.statusCode ?? 0, value, text, warnings };
}

/**
 * `HTTP <code>: <the server's message>` for a failed {@link requestKubeJson}:
 * the Status's message when the body is one, else the start of the text.
 */
export function describeKubeFailure(answer: KubeJsonResponse<unknown>): string {
  const message = (answer.value as { message?: unknown } | undefined)?.message;
  const detail =
    typeof message === "string" && message ? message : answer.text.trim().slice(0, 300) || "no body";
  return `HTTP ${answer.code}: ${detail}`;
}
