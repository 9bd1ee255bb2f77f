import { exampleOf } from "./schema-example.js";
import { isObject } from "./schema-file.js";
import { versionNames, type ApiKind } from "./kind-versions.js";

/** What an admission webhook plugin is scaffolded to do. */
export interface AdmissionScaffold {
  readonly defaulting: boolean;
  readonly validation: boolean;
}

/** The label the scaffolded webhook defaults and validates: a rule that fits any kind, to replace with the kind's own. */
const LABEL = "app.kubernetes.io/managed-by";

/** The class name of a kind's admission webhook plugin: `WidgetWebhook`. */
export function webhookClassName(kind: ApiKind): string {
  return `${kind.names.kind}Webhook`;
}

/** The exported name of a kind's conversion: `widgetConversion`. */
export function conversionName(kind: ApiKind): string {
  return `${kind.names.singular}Conversion`;
}

/**
 * `src/webhooks/<kind>.ts`: an admission webhook plugin for the stored
 * version of `kind`, with `default()` and/or `validateCreate/Update()`. Its
 * rule fits any kind (the `app.kubernetes.io/managed-by` label: defaulted to
 * the operator's name, and no other manager accepted), so the scaffolded
 * tests pass as written and fail when the webhook is not called.
 */
export function admissionPluginModule(operator: string, kind: ApiKind, what: AdmissionScaffold): string {
  const { type, handle, module } = versionNames(kind, kind.storage);
  const cls = webhookClassName(kind);
  const v = kind.names.singular;
  const imports = [
    ...(what.validation ? ["Admission"] : []),
    "type AdmissionWebhookPlugin",
    "type WebhookBuilder",
  ];
  const lines = [
    `import { ${imports.join(", ")} } from "@tessera/runtime";`,
    `import { ${handle}, type ${type} } from "../generated/${module}.js";`,
    "",
    `/** The label this webhook ${what.defaulting ? "sets on" : "checks on"} every ${kind.names.kind}. */`,
    `export const MANAGED_BY = "${LABEL}";`,
    "",
    "/**",
    ` * Admission for ${kind.names.kind}s: the API server calls it on each create and update, before the`,
    " * object is stored" +
      (what.defaulting ? "; `default()` first (mutating), then" : ", and") +
      (what.validation
        ? " `validateCreate()`/`validateUpdate()` decide."
        : " the object is stored as defaulted."),
    " * A starting point: replace the managed-by rule with the kind's own.",
    " */",
    `export class ${cls} implements AdmissionWebhookPlugin<${type}> {`,
    "  // The kind it admits and the API server's settings: `tessera generate` writes the webhook",
    "  // configurations from this (failurePolicy Fail: while the webhook is down, creates and updates",
    "  // of this kind are refused). Like controller(), generate calls it on an instance it does not",
    "  // construct: use methods and module-level values here, not fields or injected services.",
    "  webhook(on: WebhookBuilder) {",
    `    return on.for(${handle}, { failurePolicy: "Fail", timeoutSeconds: 10 });`,
    "  }",
  ];
  if (what.defaulting) {
    lines.push(
      "",
      "  // Changes the object to what should be stored (or returns that object); Tessera sends the API",
      "  // server the JSON patch between the two.",
      `  default(${v}: ${type}) {`,
      `    ${v}.metadata = { ...${v}.metadata, labels: { [MANAGED_BY]: "${operator}", ...${v}.metadata?.labels } };`,
      "  }",
    );
  }
  if (what.validation) {
    lines.push(
      "",
      "  // Allowed (perhaps with warnings), or denied with a message and the fields at fault.",
      `  validateCreate(${v}: ${type}) {`,
      `    return checkManagedBy(${v});`,
      "  }",
      "",
      `  validateUpdate(${v}: ${type}) {`,
      `    return checkManagedBy(${v});`,
      "  }",
    );
  }
  lines.push("}", "");
  if (what.validation) {
    lines.push(
      `function checkManagedBy(${v}: ${type}) {`,
      `  const manager = ${v}.metadata?.labels?.[MANAGED_BY];`,
      `  if (manager !== undefined && manager !== "${operator}") {`,
      `    return Admission.deny(\`a ${kind.names.kind} is managed by ${operator}, not \${manager}\`, {`,
      `      causes: [{ field: \`metadata.labels[\${MANAGED_BY}]\`, message: 'must be "${operator}" or unset' }],`,
      "    });",
      "  }",
      "  return Admission.allow();",
      "}",
      "",
    );
  }
  return lines.join("\n");
}

/** `test/<kind>.webhook.unit.test.ts`: the plugin's functions called directly. */
export function admissionUnitTest(operator: string, kind: ApiKind, what: AdmissionScaffold): string {
  const { type } = versionNames(kind, kind.storage);
  const cls = webhookClassName(kind);
  const v = kind.names.singular;
  const apiVersion = `${kind.group}/${kind.storage.header.version}`;
  const lines = [
    'import { strict as assert } from "node:assert";',
    `import { ${cls}, MANAGED_BY } from "../src/webhooks/${v}.js";`,
    `import type { ${type} } from "../src/generated/index.js";`,
    "",
    "// The webhook's functions called directly, in milliseconds; the same webhook behind the real",
    `// API server is tested in ${v}.webhook.test.ts.`,
    `function ${v}(labels?: Record<string, string>): ${type} {`,
    `  return {`,
    `    apiVersion: "${apiVersion}",`,
    `    kind: "${kind.names.kind}",`,
    `    metadata: { name: "first", namespace: "default", ...(labels ? { labels } : {}) },`,
    `  } as ${type};`,
    "}",
    "",
    `describe("${cls}, its functions", () => {`,
    `  const webhook = new ${cls}();`,
  ];
  if (what.defaulting) {
    lines.push(
      "",
      '  it("defaults the managed-by label, and keeps one that is set", () => {',
      `    const unlabelled = ${v}();`,
      `    webhook.default(unlabelled);`,
      `    assert.equal(unlabelled.metadata?.labels?.[MANAGED_BY], "${operator}");`,
      `    const labelled = ${v}({ [MANAGED_BY]: "someone-else", team: "a" });`,
      `    webhook.default(labelled);`,
      `    assert.deepEqual(labelled.metadata?.labels, { [MANAGED_BY]: "someone-else", team: "a" });`,
      "  });",
    );
  }
  if (what.validation) {
    lines.push(
      "",
      '  it("allows this operator as manager, or none, and refuses another, naming the field", () => {',
      `    assert.equal(webhook.validateCreate(${v}()).allowed, true);`,
      `    assert.equal(webhook.validateUpdate(${v}({ [MANAGED_BY]: "${operator}" })).allowed, true);`,
      `    const denied = webhook.validateCreate(${v}({ [MANAGED_BY]: "someone-else" }));`,
      "    assert.equal(denied.allowed, false);",
      "    assert.ok(!denied.allowed && /managed by " +
        operator +
        ", not someone-else/.test(denied.message));",
      "    assert.deepEqual(",
      "      !denied.allowed && denied.causes.map((c) => c.field),",
      "      [`metadata.labels[${MANAGED_BY}]`],",
      "    );",
      "  });",
    );
  }
  lines.push("});", "");
  return lines.join("\n");
}

/**
 * `src/webhooks/<kind>-conversion.ts`: `defineConversion` through the stored
 * version (the hub), one `toHub`/`fromHub` pair per other version, typed over
 * the generated types. Each starts as a copy (the versions' schemas start as
 * copies); the comment says what to do as they diverge.
 */
export function conversionModule(kind: ApiKind): string {
  const hub = versionNames(kind, kind.storage);
  const spokes = kind.versions.filter((v) => v !== kind.storage);
  const hubVersion = kind.storage.header.version;
  return [
    'import { defineConversion } from "@tessera/runtime";',
    // From each version's module, not the index: generate loads this module, and the index would load the validators too.
    `import { ${hub.handle}, type ${hub.type} } from "../generated/${hub.module}.js";`,
    ...spokes.map((s) => {
      const n = versionNames(kind, s);
      return `import type { ${n.type} } from "../generated/${n.module}.js";`;
    }),
    "",
    "/**",
    ` * How ${kind.names.kind}'s versions convert, hub and spoke as kubebuilder's: every version to and`,
    ` * from the stored one, ${hubVersion} (the hub). The API server calls it whenever a client reads or`,
    " * writes a version other than the stored one. Tessera sets `apiVersion` and keeps `metadata`.",
    " * The versions' schemas started as copies, so a copy converts; when a field is renamed, moved",
    " * or added in one version, map it here both ways, keeping what the other version cannot hold",
    " * (in an annotation, as kubebuilder's conversions do), so that no field is lost on a round trip:",
    ` * test/${kind.names.singular}-conversion.unit.test.ts checks it.`,
    " */",
    `export const ${conversionName(kind)} = defineConversion(${hub.handle}, {`,
    ...spokes.flatMap((s) => {
      const n = versionNames(kind, s);
      return [
        `  ${s.header.version}: {`,
        `    toHub: (from: ${n.type}): ${hub.type} => ({ ...from }),`,
        `    fromHub: (hub: ${hub.type}): ${n.type} => ({ ...hub }),`,
        "  },",
      ];
    }),
    "});",
    "",
  ].join("\n");
}

/**
 * `test/<kind>-conversion.unit.test.ts`: each version round-trips through
 * the hub with nothing lost, on an object of each version with every field
 * its schema has set.
 */
export function conversionUnitTest(kind: ApiKind): string {
  const hub = versionNames(kind, kind.storage);
  const spokes = kind.versions.filter((v) => v !== kind.storage);
  const name = conversionName(kind);
  const sample = (schemaVersion: (typeof kind.versions)[number]) => {
    const object = exampleOf(schemaVersion.openAPIV3Schema) as Record<string, unknown>;
    const properties = isObject(schemaVersion.openAPIV3Schema["properties"])
      ? schemaVersion.openAPIV3Schema["properties"]
      : {};
    return {
      apiVersion: `${kind.group}/${schemaVersion.header.version}`,
      kind: kind.names.kind,
      metadata: { name: "example", namespace: "default" },
      ...Object.fromEntries(["spec", "status"].filter((k) => k in properties).map((k) => [k, object[k]])),
    };
  };
  const literal = (value: unknown) => tsLiteral(value, "");
  const types = [hub.type, ...spokes.map((s) => versionNames(kind, s).type)];
  return [
    'import { strict as assert } from "node:assert";',
    `import { ${name} } from "../src/webhooks/${kind.names.singular}-conversion.js";`,
    `import type { ${types.join(", ")} } from "../src/generated/index.js";`,
    "",
    "// One object of each version with every field of its schema set (written by tessera create",
    "// webhook from the schemas): add the cases a conversion must keep as the versions diverge.",
    `const hub: ${hub.type} = ${literal(sample(kind.storage))};`,
    ...spokes.map((s) => `const ${s.header.version}: ${versionNames(kind, s).type} = ${literal(sample(s))};`),
    "",
    `describe("${kind.names.kind} conversion, through ${kind.storage.header.version}", () => {`,
    ...spokes.flatMap((s) => [
      `  it("${s.header.version} round-trips through the hub, and the hub through ${s.header.version}, with no field lost", () => {`,
      `    const { toHub, fromHub } = ${name}.spokes["${s.header.version}"]!;`,
      `    assert.deepEqual(fromHub(toHub(${s.header.version})), ${s.header.version});`,
      "    assert.deepEqual(toHub(fromHub(hub)), hub);",
      "  });",
    ]),
    "});",
    "",
  ].join("\n");
}

/** `value` as a TypeScript literal, two spaces per level, keys unquoted where they can be. */
function tsLiteral(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => `${inner}${tsLiteral(v, inner)},`).join("\n")}\n${indent}]`;
  }
  if (isObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
    return `{\n${entries.map(([k, v]) => `${inner}${key(k)}: ${tsLiteral(v, inner)},`).join("\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}
