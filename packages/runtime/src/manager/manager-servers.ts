import type { AddressInfo } from "node:net";
import type { Runnable } from "@tessera/core";
import type { EndpointServer } from "../server/endpoint-server.js";

/** The servers a manager runs, by name: `health` (probes), `metrics`; a webhook server joins the same way. */
export type ServerName = "health" | "metrics";

/**
 * The manager's HTTP servers. Each runs from start to stop, leader or not;
 * a server turned off (bind address "0") is never added, so it has no address.
 */
export class ManagerServers {
  private readonly servers = new Map<ServerName, EndpointServer>();

  add(name: ServerName, server: EndpointServer): void {
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
