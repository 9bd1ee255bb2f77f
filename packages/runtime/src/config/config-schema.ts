/**
 * The JSON schema (draft 2020-12 subset ajv checks) of a manager's
 * configuration, shipped with the package so editors and CI can validate an
 * operator's config file too (`tessera.config.yaml`). Every field is
 * optional here: defaults fill what is absent after validation.
 */
export const managerConfigSchema = {
  $id: "https://tessera.dev/schemas/manager-config.json",
  title: "Tessera manager configuration",
  type: "object",
  additionalProperties: false,
  properties: {
    name: {
      type: "string",
      pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      maxLength: 48,
      description: "The operator's name (a DNS label): field manager, Lease and ring prefix.",
    },
    namespace: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 63 },
    identity: { type: "string", minLength: 1, maxLength: 128 },
    fieldManager: { type: "string", minLength: 1, maxLength: 128 },
    mode: { enum: ["leader", "sharded", "every-replica"] },
    kubeconfig: { type: "string", minLength: 1 },
    allowInsecureTLS: {
      type: "boolean",
      description:
        "Accept a kubeconfig cluster with insecure-skip-tls-verify: true (refused otherwise); warns once. For development clusters only.",
    },
    logLevel: { enum: ["debug", "info", "warn", "error"] },
    wire: {
      enum: ["protobuf", "json"],
      description:
        "Kubernetes protobuf for built-in kinds (custom resources are JSON either way), or JSON for all.",
    },
    compression: {
      enum: ["gzip", "none"],
      description: "Offer gzip on the informers' LISTs and WATCHes (pays on a slow link to the API server).",
    },
    leaderElection: {
      type: "object",
      additionalProperties: false,
      properties: {
        leaseName: { type: "string", pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", maxLength: 253 },
        leaseDurationMs: { type: "integer", minimum: 1000 },
        renewDeadlineMs: { type: "integer", minimum: 500 },
        retryPeriodMs: { type: "integer", minimum: 100 },
      },
    },
    sharding: {
      type: "object",
      additionalProperties: false,
      properties: {
        ring: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 40 },
        slots: {
          type: "integer",
          enum: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
          description: "A power of two from 1 to 65536.",
        },
      },
    },
    shutdown: {
      type: "object",
      additionalProperties: false,
      properties: { drainTimeoutMs: { type: "integer", minimum: 0 } },
    },
    healthBindAddress: { type: "string", pattern: "^(0|[^\\s:]*:[0-9]{1,5})$" },
    metricsBindAddress: { type: "string", pattern: "^(0|[^\\s:]*:[0-9]{1,5})$" },
    metrics: {
      type: "object",
      additionalProperties: false,
      properties: {
        secure: { type: "boolean", description: "Serve /metrics over HTTPS." },
        certFile: { type: "string", minLength: 1 },
        keyFile: { type: "string", minLength: 1 },
        auth: {
          type: "boolean",
          description: "Authenticate (TokenReview) and authorize (SubjectAccessReview) every scrape.",
        },
      },
    },
    cache: {
      type: "object",
      additionalProperties: false,
      properties: { syncTimeoutMs: { type: "integer", minimum: 1 } },
    },
    controllers: {
      type: "object",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        properties: {
          mode: { enum: ["leader", "sharded", "every-replica"] },
          concurrency: { type: "integer", minimum: 1, maximum: 1024 },
          reconcileTimeoutMs: { type: "integer", minimum: 0 },
        },
      },
    },
  },
} as const;
