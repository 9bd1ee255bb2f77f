import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@tessera/core";
import type { BindAddress } from "../server/bind-address.js";
import { EndpointServer, type EndpointHandler } from "../server/endpoint-server.js";
import type { HealthChecks } from "../server/health-checks.js";

/**
 * The health probe server: `/healthz` and `/readyz` answered from `health`
 * (`?verbose` lists every check; `/readyz/<check>` asks one).
 */
export function probeServer(health: HealthChecks, address: BindAddress, logger: Logger): EndpointServer {
  const probe =
    (kind: "healthz" | "readyz"): EndpointHandler =>
    async (_req: IncomingMessage, res: ServerResponse, url: URL) => {
      const only = url.pathname.slice(kind.length + 2) || undefined;
      const answer = await health.probe(kind, {
        verbose: url.searchParams.has("verbose"),
        ...(only !== undefined ? { only: decodeURIComponent(only) } : {}),
      });
      res.writeHead(answer.status, { "Content-Type": "text/plain; charset=utf-8" }).end(answer.body);
    };
  return new EndpointServer({
    name: "health probes",
    address,
    logger,
    routes: new Map([
      ["/healthz", probe("healthz")],
      ["/readyz", probe("readyz")],
    ]),
  });
}
