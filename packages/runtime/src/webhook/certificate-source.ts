import type { ServingCertificate } from "../server/serving-certificate.js";

/**
 * Where the webhook server's certificate comes from: mounted files, or the
 * Secret the operator keeps itself. The server serves the latest one and
 * swaps it in without a restart when it changes (rotation).
 */
export interface CertificateSource {
  /** The certificate to serve now; undefined until the first one is loaded. */
  current(): ServingCertificate | undefined;
  /** Calls `listener` with every new certificate; returns a function that stops the calls. */
  onChange(listener: (certificate: ServingCertificate) => void): () => void;
  /** Loads the certificate and keeps it current until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}
