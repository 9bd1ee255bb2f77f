import { strict as assert } from "node:assert";
import { createServer, connect, type Server, type Socket } from "node:net";
import { FaultProxy } from "../src/index.js";

// A loopback echo server stands in for the upstream: these tests are about
// the proxy's own byte handling, not about Kubernetes.
function echoServer(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((s) => s.pipe(s));
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve({ server, port: typeof a === "object" && a ? a.port : 0 });
    });
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => resolve(s));
    s.once("error", reject);
  });
}

function roundTrip(s: Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const onData = (d: Buffer) => {
      got += d.toString();
      if (got.length >= text.length) {
        s.off("data", onData);
        resolve(got);
      }
    };
    s.on("data", onData);
    s.write(text);
  });
}

function closed(s: Socket): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once("close", () => resolve())));
}

describe("FaultProxy", () => {
  let upstream: { server: Server; port: number };
  let proxy: FaultProxy;
  beforeEach(async () => {
    upstream = await echoServer();
    proxy = new FaultProxy(upstream.port);
    await proxy.start();
  });
  afterEach(async () => {
    await proxy.stop();
    upstream.server.close();
  });

  it("passes bytes both ways and counts them", async () => {
    const s = await open(proxy.port);
    assert.equal(await roundTrip(s, "hello"), "hello");
    assert.equal(proxy.stats.bytesUp, 5);
    assert.equal(proxy.stats.bytesDown, 5);
    assert.equal(proxy.stats.connections, 1);
    s.destroy();
  });

  it("cutAll ends every open connection", async () => {
    const a = await open(proxy.port);
    const b = await open(proxy.port);
    await roundTrip(a, "x");
    await roundTrip(b, "y");
    a.on("error", () => {});
    b.on("error", () => {});
    proxy.cutAll();
    await Promise.all([closed(a), closed(b)]);
    assert.equal(proxy.stats.open, 0);
  });

  it("refuse resets new connections, and lifting it lets them through", async () => {
    proxy.refuse(true);
    const s = connect(proxy.port, "127.0.0.1");
    let received = 0;
    s.on("data", (d) => (received += d.length));
    s.on("error", () => {});
    s.write("dropped");
    await closed(s);
    assert.equal(received, 0);
    proxy.refuse(false);
    const t = await open(proxy.port);
    assert.equal(await roundTrip(t, "ok"), "ok");
    t.destroy();
  });

  it("stall passes no bytes until lifted", async () => {
    proxy.stall(true);
    const s = await open(proxy.port);
    let got = "";
    s.on("data", (d) => (got += d.toString()));
    s.write("held");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(got, "");
    proxy.stall(false);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(got, "held");
    s.destroy();
  });

  it("cutAfterBytes delivers exactly N bytes, then cuts", async () => {
    proxy.cutAfterBytes(4);
    const s = await open(proxy.port);
    s.on("error", () => {});
    let got = "";
    s.on("data", (d) => (got += d.toString()));
    s.write("abcdefgh");
    await closed(s);
    assert.equal(got, "abcd");
  });

  it("setLatency delays delivery", async () => {
    proxy.setLatency(150);
    const s = await open(proxy.port);
    const t0 = process.hrtime.bigint();
    await roundTrip(s, "z");
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // Two hops (up and down) each wait the latency.
    assert.ok(ms >= 290, `round trip took ${ms} ms`);
    s.destroy();
  });

  it("setBandwidth paces the downstream as a slow link would", async () => {
    proxy.setBandwidth(100_000); // 100 kB/s
    const s = await open(proxy.port);
    const text = "y".repeat(50_000);
    const t0 = process.hrtime.bigint();
    assert.equal((await roundTrip(s, text)).length, text.length);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // 50 kB at 100 kB/s: at least half a second (the upstream direction is not limited).
    assert.ok(ms >= 480, `50 kB came back in ${ms} ms`);
    s.destroy();
  });

  it("with latency or a bandwidth limit, a response the upstream ends at once still arrives whole", async () => {
    // An upstream that sends 200 kB and closes, as a server ends a response.
    const body = Buffer.alloc(200_000, 7);
    const sender = createServer((s) => s.end(body));
    await new Promise<void>((resolve) => sender.listen(0, "127.0.0.1", resolve));
    const port = (sender.address() as { port: number }).port;
    const delayed = new FaultProxy(port);
    await delayed.start();
    try {
      for (const slow of [() => delayed.setLatency(30), () => delayed.setBandwidth(1_000_000)]) {
        slow();
        const s = await open(delayed.port);
        let received = 0;
        s.on("data", (d: Buffer) => (received += d.length));
        await closed(s);
        assert.equal(received, body.length, "every byte before the end");
        delayed.setLatency(0);
        delayed.setBandwidth(undefined);
      }
    } finally {
      await delayed.stop();
      sender.close();
    }
  });
});
