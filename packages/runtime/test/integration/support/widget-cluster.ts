// Test-side access to Widgets and ConfigMaps through the control plane's raw
// HTTP client: independent of the runtime's own client under test.
import type { V1ConfigMap } from "@kubernetes/client-node";
import { eventually, parsePrometheusText, type ControlPlane } from "@tessera/testenv";
import { widgetCrd, type Widget } from "../widget.js";

const json = { "Content-Type": "application/json" };

async function call<T>(
  cp: ControlPlane,
  method: string,
  path: string,
  body?: unknown,
  headers = json,
): Promise<T> {
  const res = await cp.raw(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as T;
}

/** Installs the Widget CRD (once per control plane) and waits until it is served. */
export async function installWidgetCrd(cp: ControlPlane): Promise<void> {
  const res = await cp.raw("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    method: "POST",
    headers: json,
    body: JSON.stringify(widgetCrd),
  });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`installing the Widget CRD: HTTP ${res.status}: ${res.body}`);
  await eventually(
    "the Widget CRD is served",
    async () => (await cp.raw("/apis/example.com/v1/widgets")).status === 200,
  );
}

/** Creates a namespace with a unique name. */
export async function createNamespace(cp: ControlPlane, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await call(cp, "POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

const widgetPath = (ns: string, name?: string) =>
  `/apis/example.com/v1/namespaces/${ns}/widgets${name ? `/${name}` : ""}`;
const configMapPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

export function createWidget(
  cp: ControlPlane,
  ns: string,
  name: string,
  spec: Widget["spec"] = {},
): Promise<Widget> {
  return call(cp, "POST", widgetPath(ns), {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: ns },
    spec,
  });
}

export function patchWidget(
  cp: ControlPlane,
  ns: string,
  name: string,
  patch: unknown,
  subresource = "",
): Promise<Widget> {
  return call(cp, "PATCH", widgetPath(ns, name) + subresource, patch, {
    "Content-Type": "application/merge-patch+json",
  });
}

export async function getWidget(cp: ControlPlane, ns: string, name: string): Promise<Widget | undefined> {
  const res = await cp.raw(widgetPath(ns, name));
  return res.status === 404 ? undefined : (JSON.parse(res.body) as Widget);
}

export async function deleteWidget(cp: ControlPlane, ns: string, name: string): Promise<void> {
  const res = await cp.raw(widgetPath(ns, name), { method: "DELETE" });
  if (res.status >= 300 && res.status !== 404)
    throw new Error(`DELETE widget ${ns}/${name}: HTTP ${res.status}`);
}

export async function getConfigMap(
  cp: ControlPlane,
  ns: string,
  name: string,
): Promise<V1ConfigMap | undefined> {
  const res = await cp.raw(configMapPath(ns, name));
  return res.status === 404 ? undefined : (JSON.parse(res.body) as V1ConfigMap);
}

export async function deleteConfigMap(cp: ControlPlane, ns: string, name: string): Promise<void> {
  const res = await cp.raw(configMapPath(ns, name), { method: "DELETE" });
  if (res.status >= 300) throw new Error(`DELETE configmap ${ns}/${name}: HTTP ${res.status}: ${res.body}`);
}

export function patchConfigMap(
  cp: ControlPlane,
  ns: string,
  name: string,
  patch: unknown,
): Promise<V1ConfigMap> {
  return call(cp, "PATCH", configMapPath(ns, name), patch, {
    "Content-Type": "application/merge-patch+json",
  });
}

/** The apiserver's count of requests by verb for `resource` (e.g. `widgets`) and `subresource`, from `apiserver_request_total`. */
export async function apiRequestCounts(
  cp: ControlPlane,
  resource: string,
  subresource = "",
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const family = parsePrometheusText(await cp.metrics()).get("apiserver_request_total");
  for (const sample of family?.samples ?? []) {
    const { verb } = sample.labels;
    if (verb === undefined || sample.labels["resource"] !== resource) continue;
    if ((sample.labels["subresource"] ?? "") !== subresource) continue;
    counts[verb] = (counts[verb] ?? 0) + sample.value;
  }
  return counts;
}
