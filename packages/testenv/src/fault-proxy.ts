import { createServer, connect, type Server, type Socket } from "node:net";

/** Counters kept by a {@link FaultProxy}. */
export interface FaultProxyStats {
  /** Connections accepted since start (including refused ones). */
  connections: number;
  /** Connections open right now. */
  open: number;
  /** Bytes sent from clients towards the upstream. */
  bytesUp: number;
  /** Bytes sent from the upstream towards clients. */
  bytesDown: number;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  down: number;
  /** When the simulated link is free to send the next downstream chunk (ms since the epoch). */
  linkFreeAt: number;
}

/**
 * A loopback TCP proxy between a client and an upstream (the apiserver) that a
 * test drives to break things on purpose. TLS passes through untouched, so the
 * client still verifies the apiserver's certificate.
 *
 * ```ts
 * const proxy = new FaultProxy(cp.apiserverPort);
 * await proxy.start();
 * kc.clusters[0].server = proxy.url; // via a copied KubeConfig
 * proxy.cutAll();
 * ```
 */
export class FaultProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private latencyMs = 0;
  private bytesPerSecond: number | undefined;
  private stalled = false;
  private refusing = false;
  private cutAfter: number | undefined;
  private readonly counters: FaultProxyStats = { connections: 0, open: 0, bytesUp: 0, bytesDown: 0 };
  /** The loopback port the proxy listens on. */
  port = 0;

  constructor(
    private readonly upstreamPort: number,
    private readonly upstreamHost = "127.0.0.1",
  ) {}

  /** `https://127.0.0.1:<port>`, for pointing a kubeconfig at the proxy. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** A copy of the counters. */
  get stats(): FaultProxyStats {
    return { ...this.counters, open: this.pairs.size };
  }

  /** Starts listening on a free loopback port (or `port`). */
  start(port = 0): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const a = server.address();
        this.port = a && typeof a === "object" ? a.port : 0;
        resolve();
      });
    });
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    this.cutAll();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  /** Destroys every open connection (both sides see a reset). */
  cutAll(): void {
    for (const p of this.pairs) this.destroy(p);
  }

  /** While on, new connections are accepted but no byte passes, either way. */
  stall(on = true): void {
    this.stalled = on;
    for (const p of this.pairs) {
      if (on) {
        p.client.pause();
        p.upstream.pause();
      } else {
        p.client.resume();
        p.upstream.resume();
      }
    }
  }

  /** Delays every chunk, in both directions, by `ms`. */
  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  /**
   * Limits each connection's downstream (server to client) to `bytesPerSecond`,
   * as a slow link would: a chunk is delivered once the link has had time to
   * carry it after the chunks before it. `undefined` lifts the limit.
   */
  setBandwidth(bytesPerSecond: number | undefined): void {
    this.bytesPerSecond = bytesPerSecond !== undefined && bytesPerSecond > 0 ? bytesPerSecond : undefined;
  }

  /** While on, new connections are reset at once. */
  refuse(on = true): void {
    this.refusing = on;
  }

  /**
   * Cuts each connection after it has carried `bytes` bytes from upstream to
   * the client (counted per connection, from now on for new connections).
   * `undefined` switches it off.
   */
  cutAfterBytes(bytes: number | undefined): void {
    this.cutAfter = bytes;
  }

  /** Zeroes the byte and connection counters. */
  resetStats(): void {
    this.counters.connections = 0;
    this.counters.bytesUp = 0;
    this.counters.bytesDown = 0;
  }

  private accept(client: Socket): void {
    this.counters.connections++;
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    const pair: Pair = { client, upstream, down: 0, linkFreeAt: 0 };
    this.pairs.add(pair);
    if (this.stalled) {
      client.pause();
      upstream.pause();
    }
    const forward = (from: Socket, to: Socket, direction: "up" | "down") => {
      // Chunks held back by latency or bandwidth are still owed to `to`: its end (and the
      // pair's teardown on close) waits for them, or a delayed response would be cut short.
      let owed = 0;
      let ended = false;
      let closed = false;
      const settle = () => {
        if (owed > 0) return;
        if (ended) to.end();
        // A side that closed on its own is passed on as a close, not a reset: a reset would
        // also throw away what the other side has not read yet (the cuts are the faults).
        if (closed) this.release(pair, to);
      };
      from.on("data", (chunk: Buffer) => {
        let data = chunk;
        if (direction === "down") {
          if (this.cutAfter !== undefined && pair.down + data.length >= this.cutAfter) {
            data = data.subarray(0, Math.max(0, this.cutAfter - pair.down));
            this.counters.bytesDown += data.length;
            pair.down += data.length;
            to.write(data, () => this.destroy(pair));
            from.pause();
            return;
          }
          pair.down += data.length;
          this.counters.bytesDown += data.length;
        } else {
          this.counters.bytesUp += data.length;
        }
        let delayMs = this.latencyMs;
        if (direction === "down" && this.bytesPerSecond !== undefined) {
          const now = Date.now();
          pair.linkFreeAt = Math.max(now, pair.linkFreeAt) + (data.length / this.bytesPerSecond) * 1000;
          delayMs += pair.linkFreeAt - now;
        }
        if (delayMs > 0) {
          from.pause();
          owed++;
          setTimeout(() => {
            owed--;
            if (!to.destroyed) to.write(data);
            if (!this.stalled) from.resume();
            settle();
          }, delayMs);
        } else if (!to.write(data)) {
          from.pause();
          to.once("drain", () => {
            if (!this.stalled) from.resume();
          });
        }
      });
      from.on("end", () => {
        ended = true;
        settle();
      });
      from.on("error", () => this.destroy(pair));
      from.on("close", () => {
        closed = true;
        settle();
      });
    };
    forward(client, upstream, "up");
    forward(upstream, client, "down");
  }

  /** Ends `to` gracefully after its peer closed; the pair is gone once both sides are. */
  private release(pair: Pair, to: Socket): void {
    if (!this.pairs.has(pair)) return;
    if (!to.destroyed) to.end();
    if (pair.client.destroyed && pair.upstream.destroyed) this.pairs.delete(pair);
    else to.once("close", () => this.pairs.delete(pair));
  }

  private destroy(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  }
}
