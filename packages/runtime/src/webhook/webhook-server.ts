import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Clock, Logger, Runnable } from "@tessera/core";
import type { BindAddress } from "../server/bind-address.js";
import { EndpointServer, type EndpointHandler } from "../server/endpoint-server.js";
import type { CheckResult } from "../server/health-checks.js";
import type { ServingCertificate } from "../server/serving-certificate.js";
import type { AdmissionHandler } from "./admission-handler.js";
import { admissionReviewOf, decodeAdmissionReview, type AdmissionResponse } from "./admission-review.js";
import type { CertificateSource } from "./certificate-source.js";
import { conversionReviewOf, decodeConversionReview } from "./conversion-review.js";
import type { Converter } from "./converter.js";
import { readRequestBody } from "./request-body.js";
import { CONVERSION_WEBHOOK_PATH } from "./webhook-definition.js";
import type { WebhookMetrics } from "./webhook-metrics.js";
import { WebhookRequestError } from "./webhook-request-error.js";

/**
 * The most an AdmissionReview body may hold: 7 MiB, controller-runtime's
 * limit. An UPDATE's review carries the object and the old object, each up
 * to the API server's 3 MiB request limit, and the envelope.
 */
export const ADMISSION_BODY_LIMIT_BYTES = 7 * 1024 * 1024;

/**
 * The most a ConversionReview body may hold: 64 MiB. The API server
 * converts a LIST's objects in one review, so this bounds the list a
 * conversion webhook can serve (in bytes of the stored version) and the
 * memory a request can take.
 */
export const CONVERSION_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

/** Options of a {@link WebhookServer}. */
export interface WebhookServerOptions {
  readonly address: BindAddress;
  readonly certificates: CertificateSource;
  readonly admission: readonly AdmissionHandler[];
  /** The kinds' conversions, served at `/convert`; absent: no conversion webhook. */
  readonly converter?: Converter;
  readonly metrics: WebhookMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The manager's webhook server: HTTPS on `webhookBindAddress` (default
 * `:9443`), every admission webhook at its path and conversion at
 * `/convert`, POST only. It runs on every replica (admission is not the
 * leader's work), starts listening once its {@link CertificateSource} has
 * a certificate (the readiness check `webhook` fails until then, saying
 * why), and serves each new certificate the source announces without a
 * restart. A body that is not a review of the right version, too large,
 * or plain HTTP gets an error status saying what is wrong (in a review of
 * the expected kind, so the API server quotes it), and the server goes on.
 */
export class WebhookServer implements Runnable {
  private server: EndpointServer | undefined;
  private readonly waiters = new Set<(address: AddressInfo | undefined) => void>();
  private stopped = false;

  constructor(private readonly options: WebhookServerOptions) {
    for (const handler of options.admission) options.metrics.declare(handler.path);
    if (options.converter) options.metrics.declare(CONVERSION_WEBHOOK_PATH);
  }

  /** The paths served. */
  paths(): string[] {
    return [
      ...this.options.admission.map((h) => h.path),
      ...(this.options.converter ? [CONVERSION_WEBHOOK_PATH] : []),
    ];
  }

  /** Resolves with the address once listening (with a certificate); `undefined` if it stopped first. */
  listening(): Promise<AddressInfo | undefined> {
    if (this.server?.address) return Promise.resolve(this.server.address);
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  /** The readiness check: ready once listening with a certificate. */
  ready(): CheckResult {
    if (this.server?.address) return { ok: true };
    const problem = (this.options.certificates as { problem?: () => string | undefined }).problem?.();
    return {
      ok: false,
      reason: this.options.certificates.current()
        ? "not listening yet"
        : `no serving certificate yet${problem ? `: ${problem}` : ""}`,
    };
  }

  async run(signal: AbortSignal): Promise<void> {
    const { certificates, logger } = this.options;
    const source = certificates.run(signal);
    try {
      // The source failing (or ending) before a first certificate ends the wait too.
      const first = await Promise.race([this.firstCertificate(signal), source.then(() => undefined)]);
      if (!first) return;
      const server = new EndpointServer({
        name: "webhook",
        address: this.options.address,
        logger,
        tls: first,
        answerPlainHttp: true,
        methods: ["POST"],
        routes: this.routes(),
      });
      this.server = server;
      const unsubscribe = certificates.onChange((certificate) => {
        server.setCertificate(certificate);
        logger.info("webhook: serving the new certificate");
      });
      void server.listening().then((address) => this.settle(address));
      try {
        await Promise.all([server.run(signal), source]);
      } finally {
        unsubscribe();
      }
    } finally {
      this.stopped = true;
      this.settle(undefined);
      await source.catch(() => {});
    }
  }

  /** The source's first certificate; undefined when `signal` aborts first. */
  private firstCertificate(signal: AbortSignal): Promise<ServingCertificate | undefined> {
    const { certificates } = this.options;
    const now = certificates.current();
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (certificate: ServingCertificate | undefined) => {
        unsubscribe();
        signal.removeEventListener("abort", onAbort);
        resolve(certificate);
      };
      const unsubscribe = certificates.onChange(done);
      const onAbort = () => done(undefined);
      if (signal.aborted) done(undefined);
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private settle(address: AddressInfo | undefined): void {
    for (const waiter of [...this.waiters]) waiter(address);
    this.waiters.clear();
  }

  private routes(): Map<string, EndpointHandler> {
    const routes = new Map<string, EndpointHandler>();
    for (const handler of this.options.admission) {
      routes.set(handler.path, (req, res) => this.serve(handler.path, req, res, "admission", handler));
    }
    if (this.options.converter) {
      routes.set(CONVERSION_WEBHOOK_PATH, (req, res) =>
        this.serve(CONVERSION_WEBHOOK_PATH, req, res, "conversion"),
      );
    }
    return routes;
  }

  private async serve(
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    type: "admission" | "conversion",
    handler?: AdmissionHandler,
  ): Promise<void> {
    const { clock, metrics, logger } = this.options;
    const end = metrics.start(path, clock.now(), () => clock.now());
    // The request's own signal: the API server gave up (its timeout) or the connection broke.
    const gone = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) gone.abort(new Error("the API server closed the connection"));
    });
    let status = 200;
    let body: unknown;
    try {
      if (type === "admission") {
        const request = decodeAdmissionReview(await readRequestBody(req, ADMISSION_BODY_LIMIT_BYTES));
        body = admissionReviewOf(await handler!.review(request, gone.signal));
      } else {
        const request = decodeConversionReview(await readRequestBody(req, CONVERSION_BODY_LIMIT_BYTES));
        const response = this.options.converter!.convert(request);
        if (response.result.status === "Failure") {
          logger.warn(`webhook ${path}: conversion failed`, { message: response.result.message });
        }
        body = conversionReviewOf(response);
      }
    } catch (error) {
      if (!(error instanceof WebhookRequestError)) {
        status = 500;
        throw error;
      }
      status = error.status;
      logger.warn(`webhook ${path}: refused a request`, { status, message: error.message });
      body =
        type === "admission"
          ? admissionReviewOf(refusal(error))
          : conversionReviewOf({
              uid: error.uid ?? "",
              convertedObjects: [],
              result: { status: "Failure", message: error.message },
            });
    } finally {
      end(status);
    }
    const text = JSON.stringify(body);
    res
      .writeHead(status, {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(text),
        ...(status === 413 ? { Connection: "close" } : {}),
      })
      .end(text);
  }
}

function refusal(error: WebhookRequestError): AdmissionResponse {
  return {
    uid: error.uid ?? "",
    allowed: false,
    status: { code: error.status, reason: "BadRequest", message: error.message },
  };
}
