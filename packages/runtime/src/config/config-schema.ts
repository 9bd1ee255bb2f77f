/**
 * The JSON schema (draft 2020-12 subset ajv checks) of a manager's
 * configuration, and the one place each setting is described: its type and
 * limits, its `description`, and its default. Everything else is derived
 * from it: the `ManagerConfig` type (`FromConfigSchema`), the `TESSERA_*`
 * variable names (`configEnvironmentVariables`), the defaults `loadConfig`
 * fills, and the settings table of docs/how-to/deploying.md
 * (`scripts/config-docs.mjs`). It ships with the package so editors and CI
 * can validate an operator's config file too (`tessera.config.yaml`).
 *
 * Every field is optional in a configuration. Each leaf says what its
 * absence means in one of three ways:
 * - `default`: the value filled in;
 * - `x-default`: a default computed at load time (from another setting or
 *   the Pod), in words; `loadConfig` holds the one function per such path;
 * - `x-optional: true`: absent stays absent (its `description` says what
 *   that means).
 *
 * `x-expected` words what a value must be where the schema's keywords say
 * it poorly (a configuration error quotes it).
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
      default: "tessera-operator",
      description:
        "The operator's name (a DNS label): field manager, Lease and ring prefix, logger name. Required when a controller runs in `leader` or `sharded` mode, so that two operators never share a Lease or a ring; the default serves `every-replica` operators only.",
    },
    namespace: {
      type: "string",
      pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      maxLength: 63,
      "x-default": '`POD_NAMESPACE`, else the service account\'s namespace, else `"default"`',
      description: "Where the manager keeps its Leases and ring assignments.",
    },
    identity: {
      type: "string",
      minLength: 1,
      maxLength: 128,
      "x-default": "`POD_NAME`, else the host name and a random suffix",
      description:
        "This replica's identity in elections and rings; it names Leases, so a lowercase RFC 1123 name.",
    },
    fieldManager: {
      type: "string",
      minLength: 1,
      maxLength: 128,
      "x-default": "`name`",
      description: "The field manager of writes and server-side apply.",
    },
    mode: {
      enum: ["leader", "sharded", "every-replica"],
      default: "leader",
      description:
        "The mode of controllers that do not choose one: `leader` (only the Lease holder reconciles), `sharded` (replicas split the objects) or `every-replica`. A controller's entry in `controllers` wins over its declaration (`.mode()`), which wins over this.",
    },
    kubeconfig: {
      type: "string",
      minLength: 1,
      "x-optional": true,
      description:
        "Path of a kubeconfig file; absent: `KUBECONFIG`, else the in-cluster service account, else `~/.kube/config`.",
    },
    allowInsecureTLS: {
      type: "boolean",
      default: false,
      description:
        "Accept a kubeconfig cluster with `insecure-skip-tls-verify: true` (refused otherwise, naming the file, context and cluster); warns once. For development clusters only.",
    },
    logLevel: {
      enum: ["debug", "info", "warn", "error"],
      default: "info",
      description: "The lowest level logged.",
    },
    wire: {
      enum: ["protobuf", "json"],
      default: "protobuf",
      description:
        "Kubernetes protobuf for built-in kinds (custom resources are JSON either way): a third of the apiserver's CPU for a watch-list; or JSON for all.",
    },
    compression: {
      enum: ["gzip", "none"],
      default: "none",
      description:
        "`gzip` offers gzip on the informers' LISTs and WATCHes: 4x fewer bytes, more CPU on both sides; pays on a slow link to the API server (docs/benchmarks.md).",
    },
    leaderElection: {
      type: "object",
      additionalProperties: false,
      description: "The Lease of `leader` controllers; the durations also time ring members' Leases.",
      properties: {
        leaseName: {
          type: "string",
          pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
          maxLength: 253,
          "x-default": "`<name>-leader`",
          description: "The Lease the leader holds, in `namespace`.",
        },
        leaseDurationMs: {
          type: "integer",
          minimum: 1000,
          default: 15_000,
          description: "How long a Lease is held without renewal before another replica may take it.",
        },
        renewDeadlineMs: {
          type: "integer",
          minimum: 500,
          default: 10_000,
          description:
            "How long the leader keeps retrying a renewal before it gives up leading; less than `leaseDurationMs`.",
        },
        retryPeriodMs: {
          type: "integer",
          minimum: 100,
          default: 2_000,
          description:
            "The interval between attempts to acquire or renew; `renewDeadlineMs` must exceed 1.2 of it.",
        },
      },
    },
    sharding: {
      type: "object",
      additionalProperties: false,
      description: "The rings of `sharded` controllers.",
      properties: {
        ring: {
          type: "string",
          pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
          maxLength: 40,
          "x-default": "`name`",
          description: "The ring name prefix: each sharded controller's ring is `<ring>-<controller>`.",
        },
        slots: {
          type: "integer",
          enum: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
          default: 256,
          "x-expected": "a power of two from 1 to 65536",
          description: "Slots of each sharded controller's ring: a power of two from 1 to 65536.",
        },
      },
    },
    shutdown: {
      type: "object",
      additionalProperties: false,
      description: "Graceful shutdown.",
      properties: {
        drainTimeoutMs: {
          type: "integer",
          minimum: 0,
          default: 30_000,
          description: "How long reconciles in flight may finish after SIGTERM before they are aborted.",
        },
      },
    },
    healthBindAddress: {
      type: "string",
      pattern: "^(0|[^\\s:]*:[0-9]{1,5})$",
      default: ":8081",
      description:
        '`/healthz` and `/readyz` (plain HTTP): "host:port", ":port", or "0" to turn the server off.',
    },
    metricsBindAddress: {
      type: "string",
      pattern: "^(0|[^\\s:]*:[0-9]{1,5})$",
      "x-default": '`":8080"`, or `":8443"` when `metrics.secure`',
      description: '`/metrics`: "host:port", ":port", or "0" to turn the server off.',
    },
    metrics: {
      type: "object",
      additionalProperties: false,
      description:
        "Secure serving of `/metrics`, as controller-runtime's: a production deployment sets `secure: true` (auth follows) and grants `create` on `tokenreviews` and `subjectaccessreviews`.",
      properties: {
        secure: {
          type: "boolean",
          default: false,
          description: "Serve `/metrics` over HTTPS; the probes stay plain HTTP.",
        },
        certFile: {
          type: "string",
          minLength: 1,
          "x-optional": true,
          description:
            "PEM certificate file (e.g. a mounted Secret's `tls.crt`), given with `keyFile`; absent (with `secure`): a self-signed certificate made at start.",
        },
        keyFile: {
          type: "string",
          minLength: 1,
          "x-optional": true,
          description: "PEM private key file of `certFile` (e.g. `tls.key`).",
        },
        auth: {
          type: "boolean",
          "x-default": "`metrics.secure`",
          description:
            "Authenticate every scrape's bearer token (TokenReview) and authorize its user (SubjectAccessReview, `get` on `/metrics`): 401, 403, or the metrics. The operator then needs `create` on `tokenreviews` and `subjectaccessreviews`.",
        },
      },
    },
    webhookBindAddress: {
      type: "string",
      pattern: "^(0|[^\\s:]*:[0-9]{1,5})$",
      default: ":9443",
      description:
        'The webhook server (HTTPS; admission and conversion webhooks, on every replica), started only when webhooks are registered: "host:port", ":port", or "0" to turn it off.',
    },
    webhook: {
      type: "object",
      additionalProperties: false,
      description: "The webhook server's certificate.",
      properties: {
        certDir: {
          type: "string",
          minLength: 1,
          "x-optional": true,
          description:
            "A directory holding the serving certificate as `tls.crt` and `tls.key` (a mounted `kubernetes.io/tls` Secret, e.g. cert-manager's), reloaded when the files change.",
        },
        certificates: {
          type: "object",
          additionalProperties: false,
          description:
            "Where the webhook server's certificate comes from, and how the operator rotates the one it keeps (docs/how-to/webhook-certificates.md).",
          properties: {
            source: {
              enum: ["secret", "files"],
              "x-default": "`files` when `webhook.certDir` is set, else `secret`",
              description:
                "`secret`: the operator keeps a CA and a serving certificate in the Secret `<name>-webhook-server-cert` in `namespace`, shared by its replicas, rotates them and writes the CA bundle into its webhook configurations and CRDs; `files`: the files in `webhook.certDir` (cert-manager's, or any mounted Secret).",
            },
            extraHosts: {
              type: "array",
              items: { type: "string", minLength: 1, maxLength: 253 },
              uniqueItems: true,
              default: [],
              description:
                'Host names and IP addresses the `secret` certificate names besides `<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`, e.g. `["127.0.0.1"]`; in the environment, comma-separated.',
            },
            servingValidityMs: {
              type: "integer",
              minimum: 2000,
              default: 31_536_000_000,
              description:
                "How long a `secret` serving certificate is valid (default a year); renewed at two thirds of it.",
            },
            caValidityMs: {
              type: "integer",
              minimum: 2000,
              default: 315_360_000_000,
              description:
                "How long a `secret` CA is valid (default ten years); renewed at two thirds of it, with an overlap. More than six `overlapMs`.",
            },
            overlapMs: {
              type: "integer",
              minimum: 1,
              default: 3_600_000,
              description:
                "How long both the old and the new CA are trusted before each step of a CA rotation (the new CA signs; the old CA leaves the bundle): more than twice `pollIntervalMs`, and than the API server takes to see a new CA bundle.",
            },
            pollIntervalMs: {
              type: "integer",
              minimum: 100,
              default: 60_000,
              description:
                "How often each replica reads the `secret` Secret for another replica's rotation, and checks the CA bundle it injected.",
            },
          },
        },
      },
    },
    cache: {
      type: "object",
      additionalProperties: false,
      description: "The informer caches.",
      properties: {
        syncTimeoutMs: {
          type: "integer",
          minimum: 1,
          default: 120_000,
          description: "How long start-up waits for the caches to sync before failing.",
        },
        namespaces: {
          type: "array",
          items: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 63 },
          uniqueItems: true,
          default: [],
          description:
            'The namespaces every cache of a namespaced kind holds (one informer per namespace), e.g. `["team-a","team-b"]`; in the environment, comma-separated. Empty: all namespaces. `cache.byKind` and a declaration\'s `namespaces` win over it.',
        },
        byKind: {
          type: "object",
          default: {},
          description:
            'Per-kind cache scope, by resource as RBAC names it (`configmaps`, `deployments.apps`, `widgets.example.com`), e.g. `{"secrets":{"labels":"app=web"}}`; a declaration\'s own cache options win over it.',
          additionalProperties: {
            type: "object",
            additionalProperties: false,
            properties: {
              namespaces: {
                type: "array",
                items: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 63 },
                uniqueItems: true,
                "x-optional": true,
                description: "The namespaces to cache; absent: `cache.namespaces`.",
              },
              labels: {
                type: "string",
                minLength: 1,
                "x-optional": true,
                description: "A label selector (`app=web,tier!=db`): only matching objects are cached.",
              },
              fields: {
                type: "string",
                minLength: 1,
                "x-optional": true,
                description:
                  "A field selector (`status.phase!=Succeeded`): only matching objects are cached.",
              },
              compact: {
                type: "boolean",
                "x-optional": true,
                description:
                  "Keep the objects as their JSON text, decoded when read (a declaration's `compact` wins); absent: off.",
              },
            },
          },
        },
        readYourWritesMs: {
          type: "integer",
          minimum: 0,
          default: 0,
          description:
            "Read your own writes: after the manager's client writes an object, a cached read of it waits up to this long (from the write) until the cache has seen the written resourceVersion; 0: off (reads may return the version before the write).",
        },
        lazy: {
          type: "boolean",
          default: false,
          description:
            "A cached read of a kind no controller declares starts a cache of the whole kind (every object in every namespace) instead of failing with an error that says to declare it or to read it with `Tokens.ApiReader`.",
        },
      },
    },
    controllers: {
      type: "object",
      default: {},
      description:
        'Per-controller overrides, by controller name, e.g. `{"widget":{"mode":"sharded","concurrency":4}}`; each wins over the controller\'s declaration.',
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        properties: {
          mode: {
            enum: ["leader", "sharded", "every-replica"],
            "x-optional": true,
            description:
              "The controller's mode (`leader`, `sharded` or `every-replica`); absent: its declaration's, else `mode`.",
          },
          concurrency: {
            type: "integer",
            minimum: 1,
            maximum: 1024,
            "x-optional": true,
            description: "Max concurrent reconciles; absent: the declaration's, else 1.",
          },
          reconcileTimeoutMs: {
            type: "integer",
            minimum: 0,
            "x-optional": true,
            description: "Per-reconcile timeout, 0 for none; absent: the declaration's, else 0.",
          },
          maxIntervalMs: {
            type: "integer",
            minimum: 0,
            "x-optional": true,
            description:
              "The resync floor: each object of the primary kind is reconciled at least this often, spread over the period (0: never); absent: the declaration's, else 36000000 (10 h).",
          },
          maxBackoffMs: {
            type: "integer",
            minimum: 1,
            "x-optional": true,
            description:
              "Caps the per-object backoff of failed reconciles, in ms (the default rate limiter's longest delay); absent: the declaration's `withOptions({ maxBackoffMs })`, else 1000000 (about 16.7 min). Not with a controller's own `rateLimiter`.",
          },
        },
      },
    },
  },
} as const;
