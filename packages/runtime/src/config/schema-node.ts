/** A node of the configuration's JSON Schema, as far as loading, the environment mapping and the docs read it. */
export interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  /** The schema of each element of an array. */
  readonly items?: SchemaNode;
  readonly enum?: readonly unknown[];
  readonly description?: string;
  /** The value filled in when the setting is absent. */
  readonly default?: unknown;
  /** A default computed at load time, in words (for the docs). */
  readonly "x-default"?: string;
  /** Absent stays absent. */
  readonly "x-optional"?: boolean;
  /** What a value must be, in words, where the schema's keywords say it poorly. */
  readonly "x-expected"?: string;
}
