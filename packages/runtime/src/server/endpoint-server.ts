import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server as NetServer,
  type Socket,
} from "node:net";
import { nodeHttp, silentLogger, type Logger, type Runnable } from "@tessera/core";
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
  /** Serve HTTPS with this certificate (swap it with {@link EndpointServer.setCertificate}); absent: plain HTTP. */
  tls?: ServingCertificate;
  /**
   * Over HTTPS, answer a client that speaks plain HTTP with a 400 that says
   * so (as Go's servers do) instead of dropping the connection. Default false.
   */
  answerPlainHttp?: boolean;
  /** The methods the routes answer; others get 405. Default `["GET"]`. */
  methods?: readonly string[];
  logger?: Logger;
}

/** The first byte of a TLS connection (a handshake record); anything else on an HTTPS port is plain HTTP. */
const TLS_HANDSHAKE = 0x16;
const PLAIN_HTTP_ANSWER = "Client sent an HTTP request to an HTTPS server.\n";

/**
 * A small HTTP (or, given a certificate, HTTPS) server for the manager's endpoints (probes, metrics,
 * webhooks): a {@link Runnable} that listens until its signal aborts, then closes its
 * connections and resolves. `run` rejects if it cannot listen (the port is
 * taken), naming the server and the address. Over HTTPS the certificate
 * can be swapped while it serves (rotation), and, with `answerPlainHttp`, a
 * client that speaks plain HTTP gets a 400 saying so.
 */
export class EndpointServer implements Runnable {
  private readonly server: Server | HttpsServer;
  /** What listens: the HTTP(S) server itself, or a front that tells TLS from plain HTTP (`answerPlainHttp`). */
  private readonly listener: Server | NetServer;
  /** The HTTPS front's connections, closed at stop whatever stage they are in. */
  private readonly sockets = new Set<Socket>();
  private readonly logger: Logger;
  private bound: AddressInfo | undefined;
  private readonly listeners = new Set<(address: AddressInfo | undefined) => void>();

  constructor(private readonly options: EndpointServerOptions) {
    this.logger = options.logger ?? silentLogger;
    const routes = [...options.routes].sort(([a], [b]) => b.length - a.length);
    const methods = options.methods ?? ["GET"];
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const route = routes.find(
        ([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`),
      );
      if (!route || !methods.includes(req.method ?? "")) {
        res
          .writeHead(route ? 405 : 404, {
            "Content-Type": "text/plain",
            ...(route ? { Allow: methods.join(", ") } : {}),
          })
          .end(route ? `${methods.join(", ")} only\n` : "not found\n");
        return;
      }
      Promise.resolve(route[1](req, res, url)).catch((error: unknown) => {
        this.logger.error(`${options.name}: a handler failed`, { path: url.pathname, error });
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
        res.end("internal error\n");
      });
    };
    if (options.tls) {
      const https = createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, answer);
      this.server = https;
      this.listener = options.answerPlainHttp ? createNetServer((socket) => this.peek(socket, https)) : https;
    } else {
      this.server = nodeHttp.createServer(answer);
      this.listener = this.server;
    }
  }

  /**
   * Serves `certificate` from now on (new connections; open ones keep the
   * one they started with). Throws for a server made without `tls`.
   */
  setCertificate(certificate: ServingCertificate): void {
    if (!this.options.tls)
      throw new TypeError(`${this.options.name}: a plain HTTP server has no certificate`);
    (this.server as HttpsServer).setSecureContext({ cert: certificate.certPem, key: certificate.keyPem });
  }

  /** Hands a TLS connection to the HTTPS server; answers plain HTTP with a 400 that says what is wrong. */
  private peek(socket: Socket, https: HttpsServer): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.once("data", (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        https.emit("connection", socket);
        process.nextTick(() => socket.resume());
        return;
      }
      this.logger.warn(`${this.options.name}: a client sent plain HTTP to the HTTPS port`, {
        remote: socket.remoteAddress,
      });
      socket.end(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
          `Content-Length: ${Buffer.byteLength(PLAIN_HTTP_ANSWER)}\r\n\r\n${PLAIN_HTTP_ANSWER}`,
      );
    });
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
        this.listener.once("error", reject);
        this.listener.listen({ port, ...(host !== undefined ? { host } : {}) }, () => {
          this.listener.off("error", reject);
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
    this.bound = this.listener.address() as AddressInfo;
    this.settle(this.bound);
    this.logger.info(`${this.options.name}: listening`, {
      address: `${this.bound.address}:${this.bound.port}`,
      scheme: this.options.tls ? "https" : "http",
    });
    if (!signal.aborted)
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    await new Promise<void>((resolve) => {
      this.listener.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
      this.server.closeAllConnections();
    });
  }

  private settle(address: AddressInfo | undefined): void {
    for (const listener of this.listeners) listener(address);
    this.listeners.clear();
  }
}
