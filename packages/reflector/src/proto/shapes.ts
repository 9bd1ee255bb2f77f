/**
 * How a Go API type's JSON follows from its protobuf message, as the tool
 * in `tools/proto` reads it from the Go types by reflection (`proto/shapes.json`):
 * per protobuf message, its fields in Go order.
 */
export interface MessageShapes {
  /** Per protobuf message, its fields in Go order (null for a struct without fields). */
  readonly messages: Readonly<Record<string, readonly FieldShape[] | null>>;
  /** apiVersion -> kind -> message, for what an envelope's TypeMeta names. */
  readonly kinds: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** One protobuf field and its JSON form. */
export interface FieldShape {
  /** The protobuf field name. */
  readonly p: string;
  /** The JSON name ("" when inlined). */
  readonly j: string;
  /** `omitempty`: left out when false, 0, "", or a nil or empty slice or map. */
  readonly oe?: boolean;
  /** `omitzero`: left out when its Go value is zero (for a struct too). */
  readonly oz?: boolean;
  /** A Go pointer: absent on the wire is nil; present is kept even when zero. */
  readonly ptr?: boolean;
  /** An embedded struct whose fields JSON lifts into the parent. */
  readonly in?: boolean;
  readonly t: TypeShape;
}

/** A Go type as the conversion needs it. */
export interface TypeShape {
  /**
   * string, bool, int, float, bytes, message, slice, map, or a type that
   * marshals itself: time, microtime, duration, quantity, intorstring,
   * rawextension, fieldsv1.
   */
  readonly k: string;
  /** The message of a `message`. */
  readonly m?: string;
  /** The element of a `slice`, the value of a `map`. */
  readonly e?: TypeShape;
}

/** A generated module of one Go package's messages (`packages/<package>.generated.ts`). */
export interface PackageModule {
  /** The package namespace's messages for protobufjs (`Namespace.addJSON`), as JSON text. */
  readonly descriptorJson: string;
  /** Its messages' shapes (message -> fields, as {@link MessageShapes.messages}), as JSON text. */
  readonly shapesJson: string;
}
