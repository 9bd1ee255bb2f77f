import { Manager } from "@tessera/runtime";

/**
 * A production manager: `/metrics` over HTTPS on :8443 with the certificate
 * a Secret mounts (leave both files out for a self-signed one), each scrape
 * authenticated (TokenReview) and authorized (SubjectAccessReview) by the
 * API server. The probes stay plain HTTP on :8081.
 */
export function createManager(): Promise<Manager> {
  return Manager.create({
    config: {
      name: "widgets",
      metrics: {
        secure: true,
        certFile: "/etc/metrics-certs/tls.crt",
        keyFile: "/etc/metrics-certs/tls.key",
      },
    },
  });
}
