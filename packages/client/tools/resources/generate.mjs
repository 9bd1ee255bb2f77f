// Generates src/builtin-resources.generated.ts: a resource handle
// (defineResource) for every built-in kind the control plane serves by
// default, typed with @kubernetes/client-node's model of it.
//
// Source: the discovery documents of k8s.io/kubernetes at the version the
// control plane is built from (the `k8s.io/kubernetes` requirement of
// packages/testenv/tools/controlplane/kube-apiserver/go.mod, whose k8s.io/api
// is the matching staging module). Kubernetes writes them from a running
// kube-apiserver (hack/update-openapi-spec.sh) and its CI fails when they
// drift, so they say what that very server serves: each resource's group,
// version, kind, plural, scope and verbs, and each group's version priority.
// k8s.io/api's Go types alone do not: plurals, scopes and preferred versions
// live in k8s.io/kubernetes' registry and install packages, which would mean
// compiling most of the apiserver to read them. The documents come with the
// module from the Go module proxy (or the cache the control-plane build
// filled): this needs Go, like the protobuf generator, not a running server.
// The integration test test/integration/builtin-resources.test.ts checks the
// result against the built kube-apiserver's discovery.
//
// Usage: node packages/client/tools/resources/generate.mjs [--check]
//   --check  write nothing; exit 1 when the file is missing or stale.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as clientNode from "@kubernetes/client-node";
import * as prettier from "prettier";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "../../../..");
const outPath = join(here, "../../src/builtin-resources.generated.ts");
const controlplaneMod = join(repo, "packages/testenv/tools/controlplane/kube-apiserver/go.mod");
const check = process.argv.includes("--check");
const self = "packages/client/tools/resources/generate.mjs";

/**
 * Kinds the server serves that client-node has no model of at that version
 * yet: typed as KubeObject (defineResource's default) instead. Anything else
 * without a model fails the generation; a kind listed here that has gained
 * one fails it too, so the list cannot go stale.
 */
const UNMODELLED = new Set([
  "certificates.k8s.io/v1 ClusterTrustBundle",
  "certificates.k8s.io/v1 PodCertificateRequest",
  "resource.k8s.io/v1 DeviceTaintRule",
  "storagemigration.k8s.io/v1 StorageVersionMigration",
]);

/** The handles that existed before this generator, whose names must not change. */
const KEPT_NAMES = [
  "ConfigMaps",
  "Secrets",
  "Services",
  "ServiceAccounts",
  "Namespaces",
  "Pods",
  "Events",
  "Deployments",
  "StatefulSets",
  "DaemonSets",
  "Jobs",
  "Leases",
  "CustomResourceDefinitions",
];

function fail(message) {
  console.error(`${self}: ${message}`);
  process.exit(1);
}

// --- where the discovery documents are ------------------------------------

const modText = readFileSync(controlplaneMod, "utf8");
const kubeVersion = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\S+)/m.exec(modText)?.[1];
const apiVersion = /^\s*k8s\.io\/api\s+=>\s+k8s\.io\/api\s+(v\S+)/m.exec(modText)?.[1];
if (!kubeVersion || !apiVersion) {
  fail(
    `cannot read the k8s.io/kubernetes requirement and the k8s.io/api replacement from ${relative(repo, controlplaneMod)}: ` +
      "regenerate it with packages/testenv/tools/controlplane/generate-kube-mod.sh",
  );
}
const goEnv = { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local" };
let moduleDir;
try {
  const downloaded = JSON.parse(
    execFileSync("go", ["mod", "download", "-json", `k8s.io/kubernetes@${kubeVersion}`], {
      cwd: dirname(controlplaneMod),
      env: goEnv,
      encoding: "utf8",
      maxBuffer: 16 << 20,
    }),
  );
  moduleDir = downloaded.Dir;
} catch (err) {
  fail(
    `go mod download k8s.io/kubernetes@${kubeVersion} failed (this generator needs Go and the Go module proxy or a filled module cache): ${err.message}`,
  );
}
const discoveryDir = join(moduleDir, "api/discovery");
const readDoc = (name) => {
  const path = join(discoveryDir, name);
  if (!existsSync(path)) fail(`k8s.io/kubernetes@${kubeVersion} has no api/discovery/${name}`);
  return JSON.parse(readFileSync(path, "utf8"));
};

// --- what the server serves by default ------------------------------------

/** Stable versions: alpha and beta APIs are off by default (KEP-3136), stable ones on. */
const isStable = (version) => /^v\d+$/.test(version);

/** Every group with its versions in priority order (the first is the preferred one); core first. */
const apis = readDoc("apis.json");
const groups = [
  { name: "", versions: ["v1"] },
  ...apis.groups.map((g) => {
    const versions = g.versions.map((v) => v.version);
    if (versions[0] !== g.preferredVersion.version) {
      fail(`${g.name}: the preferred version ${g.preferredVersion.version} is not listed first`);
    }
    return { name: g.name, versions };
  }),
];

const handles = [];
/** Served kinds left without a handle, and why: printed in the file header. */
const skipped = { createOnly: [], notDefault: [] };

for (const group of groups) {
  const seen = new Set();
  for (const version of group.versions) {
    const doc = readDoc(group.name === "" ? "api__v1.json" : `apis__${group.name}__${version}.json`);
    for (const r of doc.resources) {
      if (r.name.includes("/")) continue; // a subresource (status, scale, exec, ...)
      if (seen.has(r.kind)) continue; // served at a version of higher priority
      seen.add(r.kind);
      const gvk = `${group.name === "" ? "" : `${group.name}/`}${version} ${r.kind}`;
      if (!isStable(version)) {
        skipped.notDefault.push(gvk);
      } else if (!r.verbs.includes("list")) {
        skipped.createOnly.push(`${gvk} (${r.verbs.join(", ")})`);
      } else {
        handles.push({
          group: group.name,
          version,
          kind: r.kind,
          plural: r.name,
          scope: r.namespaced ? "Namespaced" : "Cluster",
          watchable: r.verbs.includes("watch"),
          shortNames: r.shortNames ?? [],
        });
      }
    }
  }
}

// --- names and types -------------------------------------------------------

const pascal = (s) => s.charAt(0).toUpperCase() + s.slice(1);
/** How client-node prefixes a model whose name two groups share: CoreV1Event, EventsV1Event. */
const groupPrefix = (group) => (group === "" ? "Core" : pascal(group.split(".")[0]));

/** The plural in the kind's PascalCase: networkpolicies → NetworkPolicies. */
function pluralName(h) {
  const lower = h.kind.toLowerCase();
  let common = 0;
  while (common < lower.length && lower[common] === h.plural[common]) common++;
  if (common < lower.length - 1) {
    fail(`cannot name ${h.group}/${h.version} ${h.kind}: its plural "${h.plural}" does not extend the kind`);
  }
  return h.kind.slice(0, common) + h.plural.slice(common);
}

const byPlural = new Map();
for (const h of handles) byPlural.set(h.plural, [...(byPlural.get(h.plural) ?? []), h]);
for (const h of handles) {
  const base = pluralName(h);
  const shared = byPlural.get(h.plural).length > 1;
  // The core group keeps the plain name (Events); the others get client-node's prefix (EventsV1Events).
  h.name = shared && h.group !== "" ? `${groupPrefix(h.group)}${pascal(h.version)}${base}` : base;
}
const names = new Map();
for (const h of handles) {
  if (names.has(h.name))
    fail(`two handles would be named ${h.name}: ${names.get(h.name).kind} and ${h.kind}`);
  names.set(h.name, h);
}
for (const name of KEPT_NAMES) {
  if (!names.has(name)) fail(`the existing handle ${name} would no longer be generated`);
}

/** A client-node model of a whole object: a class with apiVersion, kind and ObjectMeta metadata. */
function isObjectModel(name) {
  const model = clientNode[name];
  const attributes = typeof model === "function" ? model.attributeTypeMap : undefined;
  if (!Array.isArray(attributes)) return false;
  const type = (n) => attributes.find((a) => a.name === n)?.type;
  return type("apiVersion") === "string" && type("kind") === "string" && type("metadata") === "V1ObjectMeta";
}

const clientNodeVersion = JSON.parse(
  readFileSync(join(repo, "node_modules/@kubernetes/client-node/package.json"), "utf8"),
).version;
const problems = [];
for (const h of handles) {
  const gvk = `${h.group === "" ? "" : `${h.group}/`}${h.version} ${h.kind}`;
  const candidates = [
    `${groupPrefix(h.group)}${pascal(h.version)}${h.kind}`,
    `${pascal(h.version)}${h.kind}`,
  ];
  h.type = candidates.find(isObjectModel);
  if (h.type && UNMODELLED.has(gvk)) {
    problems.push(`${gvk} now has the model ${h.type}: remove it from UNMODELLED in ${self}`);
  } else if (!h.type && !UNMODELLED.has(gvk)) {
    problems.push(
      `@kubernetes/client-node ${clientNodeVersion} exports no model for ${gvk} (looked for ${candidates.join(", ")}): ` +
        `upgrade @kubernetes/client-node, or add "${gvk}" to UNMODELLED in ${self} to type it as KubeObject`,
    );
  }
  h.gvk = gvk;
}
for (const gvk of UNMODELLED) {
  if (!handles.some((h) => h.gvk === gvk))
    problems.push(`UNMODELLED lists ${gvk}, which is not served: remove it`);
}
if (problems.length > 0) fail(problems.join("\n"));

// --- the module --------------------------------------------------------------

const groupOrder = (g) => (g === "" ? "" : g);
handles.sort(
  (a, b) => groupOrder(a.group).localeCompare(groupOrder(b.group)) || a.kind.localeCompare(b.kind),
);

function doc(h) {
  const apiVersion = h.group === "" ? h.version : `${h.group}/${h.version}`;
  const path = h.group === "" ? `/api/${h.version}/${h.plural}` : `/apis/${apiVersion}/${h.plural}`;
  const parts = [`\`${apiVersion}\` ${h.kind} objects (\`${path}\`)`];
  parts.push(h.scope === "Namespaced" ? "namespaced" : "cluster-scoped");
  if (h.shortNames.length > 0) parts.push(`kubectl \`${h.shortNames.join("`, `")}\``);
  parts.push(
    h.type
      ? `client-node's \`${h.type}\``
      : `typed as \`KubeObject\`: client-node ${clientNodeVersion} has no model of this version`,
  );
  if (!h.watchable) parts.push("get and list only: the server cannot watch it");
  return `/** ${parts.join(", ")}. */`;
}

const list = (items) => items.map((s) => `//   ${s}`).join("\n");
const types = [...new Set(handles.map((h) => h.type).filter(Boolean))].sort();
const text = `// Generated by ${self} from the discovery documents of
// k8s.io/kubernetes ${kubeVersion} (k8s.io/api ${apiVersion}), the version the control plane
// is built from; do not edit. Regenerate with: node ${self}
//
// One handle per built-in kind the API server serves by default, at its
// group's preferred version that serves it, typed with @kubernetes/client-node
// ${clientNodeVersion}'s model. Objects are kept as the plain JSON the server sent:
// the models' \`Date\` fields (timestamps) hold strings at runtime.
//
// Names: the plural in PascalCase (ConfigMaps, NetworkPolicies). Where two
// groups serve the same plural, the core group's keeps the name and the
// other's is prefixed as client-node prefixes its model (EventsV1Events holds
// EventsV1Event objects).
//
// No handle for (so that every handle can be listed):
// - subresources (pods/status, deployments/scale, pods/exec, ...);
// - kinds that cannot be listed, only created (reviews and requests):
${list(skipped.createOnly)}
// - kinds served only at alpha or beta versions, which are off by default:
${list(skipped.notDefault)}

import type {
${types.map((t) => `  ${t},`).join("\n")}
} from "@kubernetes/client-node";
import { defineResource } from "./resource.js";
${handles
  .map(
    (h) => `
${doc(h)}
export const ${h.name} = defineResource${h.type ? `<${h.type}>` : ""}({
  group: ${JSON.stringify(h.group)},
  version: ${JSON.stringify(h.version)},
  kind: ${JSON.stringify(h.kind)},
  plural: ${JSON.stringify(h.plural)},
  scope: ${JSON.stringify(h.scope)},
});`,
  )
  .join("\n")}
`;

const formatted = await prettier.format(text, {
  ...(await prettier.resolveConfig(outPath)),
  filepath: outPath,
});
const current = existsSync(outPath) ? readFileSync(outPath, "utf8") : "";
if (current === formatted) {
  console.log(`src/builtin-resources.generated.ts is up to date (${handles.length} handles)`);
} else if (check) {
  console.error(`src/builtin-resources.generated.ts is stale: run node ${self}`);
  process.exitCode = 1;
} else {
  writeFileSync(outPath, formatted);
  console.log(`wrote src/builtin-resources.generated.ts (${handles.length} handles)`);
}
