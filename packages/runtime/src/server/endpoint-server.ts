import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { silentLogger, type Logger, type Runnable } from "@tessera/core";
import type { BindAddress } from "./bind-address.js";
import type { ServingCertificate } from "./serving-certificate.js";

/** Answers one request of an {@link EndpointServer}. */
export type EndpointHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
) => void | Promise<void>;

/** Options of an {@link EndpointServer}. */
export interface EndpointServerOptions {
  /** Names it in logs and errors: `health probes`, `metrics`. */
  name: string;
  address: BindAddress;
  /** Handlers by path prefix; the longest matching prefix answers, else 404. */
  routes: ReadonlyMap<string, EndpointHandler>;
  /** Serve HTTPS with this certificate; absent: plain HTTP. */
  tls?: ServingCertificate;
  logger?: Logger;
}

/**
 * A small HTTP (or, given a certificate, HTTPS) server for the manager's endpoints (probes, metrics): a
 * {@link Runnable} that listens until its signal aborts, then closes its
 * connections and resolves. `run` rejects if it cannot listen (the port is
 * taken), naming the server and the address.
 */
export class EndpointServer implements Runnable {
  private readonly server: Server;
  private readonly logger: Logger;
  private bound: AddressInfo | undefined;
  private readonly listeners = new Set<(address: AddressInfo | undefined) => void>();

  constructor(private readonly options: EndpointServerOptions) {
    this.logger = options.logger ?? silentLogger;
    const routes = [...options.routes].sort(([a], [b]) => b.length - a.length);
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const route = routes.find(
        ([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`),
      );
      if (!route || req.method !== "GET") {
        res
          .writeHead(route ? 405 : 404, { "Content-Type": "text/plain" })
          .end(route ? "GET only\n" : "not found\n");
        return;
      }
      Promise.resolve(route[1](req, res, url)).catch((error: unknown) => {
        this.logger.error(`${options.name}: a handler failed`, { path: url.pathname, error });
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
        res.end("internal error\n");
      });
    };
    this.server = options.tls
      ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, answer)
      : createServer(answer);
  }

  /** The address it listens on, once listening (for port 0: the port chosen). */
  get address(): AddressInfo | undefined {
    return this.bound;
  }

  /** Resolves with the address once listening; `undefined` if it stopped or failed first. */
  listening(): Promise<AddressInfo | undefined> {
    if (this.bound) return Promise.resolve(this.bound);
    return new Promise((resolve) => this.listeners.add(resolve));
  }

  async run(signal: AbortSignal): Promise<void> {
    const { host, port } = this.options.address;
    try {
      await new Promise<void>((resolve, reject) => {
        this.server.once("error", reject);
        this.server.listen({ port, ...(host !== undefined ? { host } : {}) }, () => {
          this.server.off("error", reject);
          resolve();
        });
      });
    } catch (error) {
      this.settle(undefined);
      throw new Error(
        `${this.options.name}: cannot listen on ${host ?? "*"}:${port}: ${(error as Error).message}; ` +
          `choose another bind address, or "0" to turn this server off`,
        { cause: error },
      );
    }
    this.bound = this.server.address() as AddressInfo;
    this.settle(this.bound);
    this.logger.info(`${this.options.name}: listening`, {
      address: `${this.bound.address}:${this.bound.port}`,
      scheme: this.options.tls ? "https" : "http",
    });
    if (!signal.aborted)
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private settle(address: AddressInfo | undefined): void {
    for (const listener of this.listeners) listener(address);
    this.listeners.clear();
  }
}
