/**
 * A webhook request the server cannot answer as asked: not JSON, a review of
 * another version, too large, the wrong method. Answered with `status` and
 * its message (in a review of the right kind where one is expected), and
 * logged; the server goes on serving.
 */
export class WebhookRequestError extends Error {
  override name = "WebhookRequestError";
  constructor(
    /** The HTTP status it is answered with: 400, 405, 413, 415. */
    readonly status: number,
    message: string,
    /** The request's uid, when it could be read. */
    readonly uid?: string,
  ) {
    super(message);
  }
}
