import type { IncomingMessage } from "node:http";
import { WebhookRequestError } from "./webhook-request-error.js";

/**
 * The body of `request` as UTF-8 text, refused with a
 * {@link WebhookRequestError} (413) as soon as it is over `limitBytes`
 * (by its Content-Length, or while it streams), so a client cannot make the
 * server hold more than that; and (415) when it says it is not JSON.
 */
export async function readRequestBody(request: IncomingMessage, limitBytes: number): Promise<string> {
  const type = request.headers["content-type"];
  if (type !== undefined && !/^application\/json\s*(;|$)/i.test(type)) {
    throw new WebhookRequestError(415, `the body is ${type}; a review is sent as application/json`);
  }
  const tooLarge = () =>
    new WebhookRequestError(
      413,
      `the body is over the webhook server's limit of ${limitBytes} bytes (${(limitBytes / 1048576).toFixed(0)} MiB)`,
    );
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading, but keep the socket: the 413 goes out on it (with Connection: close).
      request.off("data", onData);
      request.pause();
      chunks.length = 0;
      reject(tooLarge());
    };
    request.on("data", onData);
    request.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.once("error", (error) =>
      reject(new WebhookRequestError(400, `the request broke: ${error.message}`)),
    );
  });
}
