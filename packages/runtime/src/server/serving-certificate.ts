import { createSecureContext } from "node:tls";
import { nodeFs } from "@tessera/core";

/** A PEM certificate (chain) and its private key, for an HTTPS server. */
export interface ServingCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * Reads a certificate and key from files (as cert-manager or a mounted
 * Secret provides them: `tls.crt`, `tls.key`) and checks they are PEM and
 * belong together, so a wrong path or a mismatched pair fails at start with
 * what to fix rather than at the first scrape.
 */
export function readServingCertificate(certFile: string, keyFile: string): ServingCertificate {
  const read = (file: string, what: string) => {
    try {
      return nodeFs.readFileSync(file, "utf8");
    } catch (error) {
      throw new Error(
        `metrics: cannot read the ${what} file "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}; ` +
          `check metrics.${what === "certificate" ? "certFile" : "keyFile"}, or leave both files out for a self-signed certificate`,
        { cause: error },
      );
    }
  };
  const certificate = { certPem: read(certFile, "certificate"), keyPem: read(keyFile, "key") };
  try {
    createSecureContext({ cert: certificate.certPem, key: certificate.keyPem });
  } catch (error) {
    throw new Error(
      `metrics: the certificate "${certFile}" and key "${keyFile}" cannot serve TLS: ${(error as Error).message}; ` +
        `give a PEM certificate and the PEM private key that belongs to it`,
      { cause: error },
    );
  }
  return certificate;
}
