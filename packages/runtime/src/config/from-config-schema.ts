/**
 * The TypeScript type of a loaded configuration, read off the `as const`
 * configuration schema: `enum` is the union of its values (unless a `type`
 * says otherwise: `sharding.slots` is a `number`), `string`, `integer` and
 * `boolean` are what they say, an object of fixed `properties` is an object
 * whose leaves with a `default` or an `x-default` are always present and the
 * rest (`x-optional`) optional, and an object of open keys
 * (`additionalProperties` a schema) is a `Record`, an `array` of `items` a list.
 *
 * Written here rather than taken from json-schema-to-ts: that library makes
 * a field required only from a `required` list and cannot know that a
 * filled default makes it present, and a dependency for forty lines of
 * types over one schema would not pay.
 */
export type FromConfigSchema<S> = S extends { readonly type: "object"; readonly properties: infer P }
  ? // Fields something fills (a `default`, an `x-default`, or an object of fixed fields), then the rest,
    // made one object type (not an intersection) for readable hovers and errors.
    {
      -readonly [
        K in keyof P as P[K] extends
          | { readonly default: unknown }
          | { readonly "x-default": string }
          | { readonly type: "object"; readonly properties: object }
          ? K
          : never
      ]: FromConfigSchema<P[K]>;
    } & {
      -readonly [
        K in keyof P as P[K] extends
          | { readonly default: unknown }
          | { readonly "x-default": string }
          | { readonly type: "object"; readonly properties: object }
          ? never
          : K
      ]?: FromConfigSchema<P[K]>;
    } extends infer O
    ? { [K in keyof O]: O[K] }
    : never
  : S extends { readonly type: "object"; readonly additionalProperties: infer A extends object }
    ? Record<string, FromConfigSchema<A>>
    : S extends { readonly type: "array"; readonly items: infer I }
      ? FromConfigSchema<I>[]
      : S extends { readonly type: "string" }
        ? string
        : S extends { readonly type: "integer" | "number" }
          ? number
          : S extends { readonly type: "boolean" }
            ? boolean
            : S extends { readonly enum: readonly (infer E)[] }
              ? E
              : never;
