import { connect, createServer, type Server, type TLSSocket } from "node:tls";
import type { AddressInfo, Socket } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { generateControlPlaneCertificates, type ControlPlane } from "@tessera/testenv";

/**
 * A TLS-terminating proxy in front of a real kube-apiserver that overwrites
 * the first occurrence of a marker in the server's responses with as many
 * `#` bytes, once: the HTTP framing (chunk sizes) stays valid while the JSON
 * line carrying the marker no longer parses. The real apiserver never sends
 * a malformed watch line; this is how a test gets one into a real stream.
 *
 * The proxy has its own CA and serving certificate; upstream it
 * authenticates with the control plane's admin client certificate, so the
 * client needs no credentials of its own ({@link CorruptingProxy.kubeConfig}).
 */
export class CorruptingProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private pending: Buffer | undefined;
  private alsoBefore = 0;
  private corrupted = 0;
  private caPem = "";

  constructor(private readonly cp: ControlPlane) {}

  /** How many times the marker was overwritten (0 or 1). */
  get corruptions(): number {
    return this.corrupted;
  }

  /**
   * From now on, overwrite the next occurrence of `marker` (ASCII) in a
   * response, once. `alsoBefore` bytes before it become 0xff too: inside a
   * protobuf message those are the field's tag and length, and 0xff makes a
   * wire type that does not exist (a string's own bytes would still decode).
   */
  corruptNext(marker: string, options: { alsoBefore?: number } = {}): void {
    this.pending = Buffer.from(marker, "latin1");
    this.alsoBefore = options.alsoBefore ?? 0;
  }

  async start(): Promise<void> {
    const certs = await generateControlPlaneCertificates();
    this.caPem = certs.ca.certPem;
    const upstreamPort = this.cp.apiserverPort;
    const { certPem, keyPem } = this.cp.adminCredentials;
    const server = createServer({ cert: certs.serving.certPem, key: certs.serving.keyPem }, (client) => {
      const upstream = connect({
        host: "127.0.0.1",
        port: upstreamPort,
        ca: this.cp.caPem,
        cert: certPem,
        key: keyPem,
        servername: "localhost",
      });
      this.track(client);
      this.track(upstream);
      client.pipe(upstream);
      let held: Buffer = Buffer.alloc(0);
      upstream.on("data", (chunk: Buffer) => {
        const { pass, keep } = this.rewrite(Buffer.concat([held, chunk]));
        held = keep;
        if (pass.length > 0) client.write(pass);
      });
      upstream.on("end", () => client.end(held));
      const close = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", close);
      upstream.on("error", close);
      client.on("close", close);
      upstream.on("close", close);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
  }

  /** A kubeconfig that reaches the apiserver through this proxy. */
  get kubeConfig(): KubeConfig {
    const port = (this.server?.address() as AddressInfo | null)?.port;
    if (port === undefined) throw new Error("the proxy is not started");
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "proxy",
          server: `https://127.0.0.1:${port}`,
          caData: Buffer.from(this.caPem).toString("base64"),
        },
      ],
      users: [{ name: "anyone" }],
      contexts: [{ name: "proxy", cluster: "proxy", user: "anyone" }],
      currentContext: "proxy",
    });
    return kc;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private track(socket: TLSSocket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
  }

  /**
   * Overwrites the marker if armed and present. Bytes that might begin a
   * marker split across two reads are kept back (only while armed, and only
   * as many as match the marker's start), so a live stream is never delayed
   * by more than an incomplete marker.
   */
  private rewrite(data: Buffer): { pass: Buffer; keep: Buffer } {
    const marker = this.pending;
    if (!marker) return { pass: data, keep: Buffer.alloc(0) };
    const at = data.indexOf(marker);
    if (at !== -1) {
      data.fill(0x23, at, at + marker.length);
      data.fill(0xff, Math.max(0, at - this.alsoBefore), at);
      this.pending = undefined;
      this.corrupted++;
      return { pass: data, keep: Buffer.alloc(0) };
    }
    for (let n = Math.min(marker.length - 1, data.length); n > 0; n--) {
      if (data.subarray(data.length - n).equals(marker.subarray(0, n))) {
        return { pass: data.subarray(0, data.length - n), keep: Buffer.from(data.subarray(data.length - n)) };
      }
    }
    return { pass: data, keep: Buffer.alloc(0) };
  }
}
