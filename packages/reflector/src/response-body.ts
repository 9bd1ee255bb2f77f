import type { IncomingMessage } from "node:http";
import { PassThrough, type Readable } from "node:stream";
import { KubeRequestError, readKubeResponse } from "@tessera/client";
import { nodeBuiltin } from "@tessera/core";
import { ConnectionError, StreamDecodeError, type ListWatchErrorContext } from "./list-watch-error.js";

/** What a {@link KubeListerWatcher} may ask the server to compress its responses with. */
export type Compression = "gzip" | "none";

/** The request headers that offer `compression`. */
export function acceptEncoding(compression: Compression | undefined): Record<string, string> {
  return compression === "gzip" ? { "Accept-Encoding": "gzip" } : {};
}

/**
 * The body of a list or watch response as a stream of its decoded bytes:
 * the response itself, or, when the server compressed it
 * (`Content-Encoding: gzip`), the response piped through a gunzip stream, so
 * a watch's events come out as their frames arrive and nothing is buffered
 * whole. Errors come out of the returned stream: a broken or truncated
 * connection as a {@link ConnectionError}, bytes that are not gzip as a
 * {@link StreamDecodeError}.
 */
export function responseBody(res: IncomingMessage, context: ListWatchErrorContext): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding === "identity") return res;
  if (encoding !== "gzip") {
    res.destroy();
    throw new StreamDecodeError(
      context,
      `the server answered with Content-Encoding ${encoding}, which was not offered`,
      "",
    );
  }
  // The caller reads `out`; each failure reaches it once, as the error that names its cause.
  // node:zlib loads only once a server compresses a response: most operators never load it.
  const gunzip = nodeBuiltin("node:zlib").createGunzip();
  const out = new PassThrough();
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    res.destroy();
    gunzip.destroy();
    out.destroy(err);
  };
  gunzip.on("error", (err) =>
    fail(new StreamDecodeError(context, `the gzip body could not be decoded: ${err.message}`, "", err)),
  );
  res.on("error", (err) => fail(new ConnectionError(context, `the response broke: ${err.message}`, err)));
  res.on("close", () => {
    if (!res.complete) fail(new ConnectionError(context, "the response was closed before its end"));
  });
  res.pipe(gunzip).pipe(out);
  return out;
}

/**
 * Reads all of a (decoded) body, keeping at most `maxBytes`. Rejects with a
 * {@link ConnectionError} when the connection breaks, a
 * {@link StreamDecodeError} when the body cannot be decoded, or with the
 * signal's reason on abort.
 */
export async function readBody(
  res: IncomingMessage,
  body: Readable,
  context: ListWatchErrorContext,
  maxBytes = Number.POSITIVE_INFINITY,
  signal?: AbortSignal,
): Promise<Buffer> {
  try {
    return await readKubeResponse(res, maxBytes, signal, body);
  } catch (err) {
    if (!(err instanceof KubeRequestError)) throw err;
    throw new ConnectionError(context, err.message, err.cause ?? err);
  }
}
