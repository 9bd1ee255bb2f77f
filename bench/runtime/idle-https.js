// A floor for startup.js: the least a Node operator does, with node's own
// modules only. It reads the pod's service-account token and CA, opens one
// HTTPS watch of ConfigMaps on the API server (as one informer would), prints
// the ready line once the server answered, and idles with the watch open.
// Whatever a framework adds on top of this is its own cost.
import { readFileSync } from "node:fs";
import { request } from "node:https";

const dir = "/var/run/secrets/kubernetes.io/serviceaccount";
const req = request({
  host: process.env.KUBERNETES_SERVICE_HOST,
  port: process.env.KUBERNETES_SERVICE_PORT,
  path: "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true",
  ca: readFileSync(`${dir}/ca.crt`),
  headers: { Authorization: `Bearer ${readFileSync(`${dir}/token`, "utf8").trim()}` },
});
req.on("response", (res) => {
  if (res.statusCode !== 200) throw new Error(`watch: HTTP ${res.statusCode}`);
  res.on("data", () => {});
  process.stdout.write('{"ev":"ready"}\n');
});
req.end();
const timer = setInterval(() => {}, 1 << 30);
process.on("SIGTERM", () => {
  clearInterval(timer);
  req.destroy();
});
