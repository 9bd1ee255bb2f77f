import { hostname } from "node:os";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock, Logger } from "@tessera/core";
import type { ManagerConfig } from "../config/manager-config.js";
import type { KubeTransport } from "@tessera/client";
import { withAuthenticationAndAuthorization } from "../server/authenticated-handler.js";
import type { BindAddress } from "../server/bind-address.js";
import { EndpointServer, type EndpointHandler } from "../server/endpoint-server.js";
import type { MetricsEndpoint } from "../server/metrics-endpoint.js";
import { selfSignedCertificate } from "../server/self-signed-certificate.js";
import { readServingCertificate, type ServingCertificate } from "../server/serving-certificate.js";
import { SubjectAccessReviewAuthorizer } from "../server/subject-access-review-authorizer.js";
import { TokenReviewAuthenticator } from "../server/token-review-authenticator.js";

/** What the metrics server is built from. */
export interface MetricsServerOptions {
  config: ManagerConfig["metrics"];
  address: BindAddress;
  logger: Logger;
  prometheus: MetricsEndpoint;
  clock: Clock;
  /** The API client's connection: scrapes are reviewed with the operator's own credentials. */
  transport: () => KubeTransport;
}

/**
 * The metrics server: `/metrics` from the Prometheus exporter, over HTTPS
 * when `config.secure`, each scrape authenticated and authorized through the
 * API server when `config.auth`.
 */
export function metricsServer(options: MetricsServerOptions): EndpointServer {
  const { prometheus } = options;
  return new EndpointServer({
    name: "metrics",
    address: options.address,
    logger: options.logger,
    ...metricsServing(options),
    routes: new Map([
      [
        "/metrics",
        metricsFilter(options)((req: IncomingMessage, res: ServerResponse) => prometheus.handle(req, res)),
      ],
    ]),
  });
}

/** The certificate when `config.secure`: the files given, else a self-signed one. */
function metricsServing({ config, address, logger, clock }: MetricsServerOptions): {
  tls?: ServingCertificate;
} {
  const { secure, certFile, keyFile } = config;
  if (!secure) return {};
  if (certFile !== undefined && keyFile !== undefined) {
    return { tls: readServingCertificate(certFile, keyFile) };
  }
  const bound = address.host !== undefined && !["0.0.0.0", "::"].includes(address.host) ? [address.host] : [];
  const hosts = [...new Set(["localhost", "127.0.0.1", "::1", hostname(), ...bound])];
  logger.info(
    "metrics: serving a self-signed certificate; give metrics.certFile and keyFile to use your own",
    {
      hosts,
    },
  );
  return { tls: selfSignedCertificate({ hosts, clock }) };
}

/** Authentication and authorization of scrapes through the API server when `config.auth`. */
function metricsFilter({
  config,
  logger,
  clock,
  transport,
}: MetricsServerOptions): (handler: EndpointHandler) => EndpointHandler {
  if (!config.auth) return (handler) => handler;
  if (!config.secure) {
    logger.warn(
      "metrics: auth is on without secure: scrapers' bearer tokens cross the network in clear text",
    );
  }
  // The API client's own connection and credentials: the operator's service account reviews.
  const authenticator = new TokenReviewAuthenticator({ transport: transport(), clock });
  const authorizer = new SubjectAccessReviewAuthorizer({ transport: transport(), clock });
  return (handler) => withAuthenticationAndAuthorization(handler, { authenticator, authorizer, logger });
}
