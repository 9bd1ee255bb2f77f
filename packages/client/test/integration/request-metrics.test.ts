// client-go's request metrics, recorded by the transport for real requests
// to the API server, and for one that found no server.
import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import type { Histogram } from "@opentelemetry/sdk-metrics";
import { TestMetrics } from "@tessera/core/testing";
import { freePort, useControlPlane } from "@tessera/testenv";
import { ApiClient, ConfigMaps, KubeTransport, TransportError } from "../../src/index.js";

describe("KubeTransport request metrics (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();

  it("counts every request by code, method and host, and times it by verb and host", async () => {
    const metrics = new TestMetrics();
    const transport = new KubeTransport(env.cp.kubeConfig, { meter: metrics.meter });
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "metrics-test", transport });
    const host = new URL(env.cp.kubeConfig.getCurrentCluster()!.server).host;
    try {
      const cm = { metadata: { name: "counted", namespace: "default" }, data: { a: "1" } };
      await api.create(ConfigMaps, cm); // POST 201
      await assert.rejects(api.create(ConfigMaps, cm)); // POST 409
      assert.ok(await api.get(ConfigMaps, { namespace: "default", name: "counted" })); // GET 200
      assert.equal(await api.get(ConfigMaps, { namespace: "default", name: "absent" }), undefined); // GET 404

      const requests = await metrics.points("rest_client_requests_total");
      const counted = requests
        .map(
          (p) =>
            `${String(p.attributes["method"])} ${String(p.attributes["code"])} ${String(p.attributes["host"])}=${p.value as number}`,
        )
        .sort();
      assert.deepEqual(counted, [
        `GET 200 ${host}=1`,
        `GET 404 ${host}=1`,
        `POST 201 ${host}=1`,
        `POST 409 ${host}=1`,
      ]);

      const durations = await metrics.points("rest_client_request_duration_seconds");
      assert.deepEqual(
        durations.map((p) => p.attributes).sort((a, b) => String(a["verb"]).localeCompare(String(b["verb"]))),
        [
          { verb: "GET", host },
          { verb: "POST", host },
        ],
      );
      for (const point of durations) {
        const histogram = point.value as Histogram;
        assert.equal(histogram.count, 2);
        assert.ok(histogram.sum! > 0, "a request takes time");
        assert.deepEqual(
          histogram.buckets.boundaries,
          [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
        );
      }
    } finally {
      transport.close();
      await metrics.close();
    }
  });

  it("counts a request that got no answer as code <error>", async () => {
    const port = await freePort();
    const nowhere = new KubeConfig();
    nowhere.loadFromOptions({
      clusters: [{ name: "nowhere", server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "c", cluster: "nowhere", user: "u" }],
      currentContext: "c",
    });
    const metrics = new TestMetrics();
    const transport = new KubeTransport(nowhere, { meter: metrics.meter });
    try {
      await assert.rejects(
        transport.call(
          { verb: "get", resource: "namespaces", name: "default" },
          { method: "GET", path: "/api/v1/namespaces/default" },
        ),
        (err: unknown) => err instanceof TransportError && err.code === 0,
      );
      assert.equal(
        await metrics.value("rest_client_requests_total", {
          code: "<error>",
          method: "GET",
          host: `127.0.0.1:${port}`,
        }),
        1,
      );
      assert.equal(
        await metrics.value("rest_client_request_duration_seconds", {
          verb: "GET",
          host: `127.0.0.1:${port}`,
        }),
        1,
      );
    } finally {
      transport.close();
      await metrics.close();
    }
  });
});
