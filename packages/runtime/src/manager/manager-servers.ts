import type { AddressInfo } from "node:net";
import type { Clock, Logger, Runnable } from "@tessera/core";
import type { KubeTransport } from "@tessera/client";
import type { ManagerConfig } from "../config/manager-config.js";
import { parseBindAddress } from "../server/bind-address.js";
import type { HealthChecks } from "../server/health-checks.js";
import type { MetricsEndpoint } from "../server/metrics-endpoint.js";
import { metricsServer } from "./metrics-server.js";
import { probeServer } from "./probe-server.js";

/** The servers a manager runs, by name: `health` (probes), `metrics`, `webhook`. */
export type ServerName = "health" | "metrics" | "webhook";

/** A server the manager runs: it listens from start to stop and says where. */
export interface ManagedServer extends Runnable {
  listening(): Promise<AddressInfo | undefined>;
}

/** What the configured servers are built from; services are resolved only for a server that is on. */
export interface ConfiguredServersOptions {
  config: ManagerConfig;
  health: HealthChecks;
  logger: Logger;
  prometheus: () => MetricsEndpoint;
  clock: () => Clock;
  transport: () => KubeTransport;
}

/**
 * The manager's HTTP servers. Each runs from start to stop, leader or not;
 * a server turned off (bind address "0") is never added, so it has no address.
 */
export class ManagerServers {
  private readonly servers = new Map<ServerName, ManagedServer>();

  /** Adds the probe and metrics servers the configuration turns on; throws on a malformed bind address. */
  addConfigured(options: ConfiguredServersOptions): void {
    const { config, logger } = options;
    const health = parseBindAddress(config.healthBindAddress, "healthBindAddress");
    const metrics = parseBindAddress(config.metricsBindAddress, "metricsBindAddress");
    if (health) this.add("health", probeServer(options.health, health, logger));
    if (metrics) {
      this.add(
        "metrics",
        metricsServer({
          config: config.metrics,
          address: metrics,
          logger,
          prometheus: options.prometheus(),
          clock: options.clock(),
          transport: options.transport,
        }),
      );
    }
  }

  add(name: ServerName, server: ManagedServer): void {
    this.servers.set(name, server);
  }

  /** Where `name` listens once it does (with port 0, the port chosen); `undefined` if it is off. */
  async listening(name: ServerName): Promise<AddressInfo | undefined> {
    return this.servers.get(name)?.listening();
  }

  /** One runnable per server, named `<name> server` for logs. */
  runnables(): Array<{ name: string; runnable: Runnable }> {
    return [...this.servers].map(([name, server]) => ({ name: `${name} server`, runnable: server }));
  }
}
