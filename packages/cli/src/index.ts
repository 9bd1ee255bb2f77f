/**
 * @tessera/cli: the `tessera` command, and the same steps as functions:
 * scaffold an operator project from templates/ ({@link newProject}), add a
 * kind or a version of one ({@link createApi}), add webhooks
 * ({@link createWebhook}), and regenerate its CRDs, TypeScript types, ajv
 * validators, least-privilege RBAC and webhook manifests from one schema per
 * kind and version and the controllers' and webhooks' declarations
 * ({@link generate}).
 */
export { buildProgram } from "./program.js";
export { runTessera } from "./run-tessera.js";
export { cliVersion } from "./cli-version.js";
export { CliError } from "./cli-error.js";
export { newProject } from "./new-project.js";
export type { NewProjectOptions, NewProjectResult } from "./new-project.js";
export { createApi } from "./create-api.js";
export type { CreateApiOptions, CreateApiResult } from "./create-api.js";
export { createWebhook } from "./create-webhook.js";
export type { CreateWebhookOptions } from "./create-webhook.js";
export { generate } from "./generate.js";
export type { GenerateOptions, GenerateResult } from "./generate.js";
export { readKindSchema, structuralProblems } from "./schema-file.js";
export type { KindSchema, KindHeader, SchemaNode } from "./schema-file.js";
export { customResourceDefinition, printerColumns } from "./crd.js";
export type { PrinterColumn, ConversionService } from "./crd.js";
export { groupKindVersions, versionNames, compareVersions } from "./kind-versions.js";
export type { ApiKind, VersionNames } from "./kind-versions.js";
export { webhookManifests } from "./webhook-manifests.js";
export type { ProjectConfig } from "./project-config.js";
export type { WebhookManifests } from "./webhook-manifests.js";
export { deriveRules, rbacManifests } from "./rbac.js";
export type { PolicyRule, ControllerDeclaration, DerivedRules, ResourceRef } from "./rbac.js";
export { checkKind, checkGroup, checkVersion, checkProjectName, kindNames, pluralize } from "./names.js";
export type { KindNames } from "./names.js";
export { readRings, ringToJson, assignmentFromJson } from "./ring-snapshot.js";
export type { RingSnapshot, MemberSnapshot, RingJson } from "./ring-snapshot.js";
export { renderRing } from "./render-ring.js";
export type { RenderOptions } from "./render-ring.js";
export { showShards } from "./shards-command.js";
export { runBundle } from "./bundle-command.js";
export type { BundleOptions, BundleResult } from "./bundle-command.js";
export type { ShardsOptions } from "./shards-command.js";
export { terminalProgress, silentProgress } from "./progress.js";
export type { Progress } from "./progress.js";
export { runDev } from "./dev-command.js";
export type { DevOptions } from "./dev-command.js";
export { devReplicas, DEV_FIRST_PORT } from "./dev-replicas.js";
export type { DevReplica } from "./dev-replicas.js";
export { prettyLogLine } from "./log-pretty-printer.js";
export { packageManager, PNPM_VERSION } from "./package-manager.js";
export type { PackageManager, PackageManagerName } from "./package-manager.js";
