/**
 * The TypeScript type of a loaded configuration, read off the `as const`
 * configuration schema: `enum` is the union of its values (unless a `type`
 * says otherwise: `sharding.slots` is a `number`), `string`, `integer` and
 * `boolean` are what they say, an object of fixed `properties` is an object
 * whose leaves with a `default` or an `x-default` are always present and the
 * rest (`x-optional`) optional, and an object of open keys
 * (`additionalProperties` a schema) is a `Record`.
 *
 * Written here rather than taken from json-schema-to-ts: that library makes
 * a field required only from a `required` list and cannot know that a
 * filled default makes it present, and a dependency for forty lines of
 * types over one schema would not pay.
 */
export type FromConfigSchema<S> = S extends { readonly type: "object"; readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P as IsOptional<P[K]> extends true ? never : K]: FromConfigSchema<P[K]> } & {
        -readonly [K in keyof P as IsOptional<P[K]> extends true ? K : never]?: FromConfigSchema<P[K]>;
      }
    >
  : S extends { readonly type: "object"; readonly additionalProperties: infer A extends object }
    ? Record<string, FromConfigSchema<A>>
    : S extends { readonly type: "string" }
      ? string
      : S extends { readonly type: "integer" | "number" }
        ? number
        : S extends { readonly type: "boolean" }
          ? boolean
          : S extends { readonly enum: readonly (infer E)[] }
            ? E
            : never;

/** A leaf nobody fills: `x-optional`, or neither `default` nor `x-default`. */
type IsOptional<S> = S extends { readonly "x-optional": true }
  ? true
  : S extends { readonly type: "object"; readonly properties: object }
    ? false
    : S extends { readonly default: unknown }
      ? false
      : S extends { readonly "x-default": string }
        ? false
        : true;

/** One object type instead of an intersection, for readable hovers and errors. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};
