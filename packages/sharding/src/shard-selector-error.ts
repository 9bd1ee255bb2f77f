/** What the server accepts, quoted in every selector error. */
export const ACCEPTED_SELECTOR_FORMS =
  "accepted form: shardRange(<field>, '<start>', '<end>') with <field> object.metadata.uid or " +
  "object.metadata.namespace, each bound '0x' + exactly 16 lowercase hex digits (the end may also be " +
  "'0x10000000000000000' = 2^64), start < end; several terms joined by ' || ', all on the same field";

/**
 * A shard selector (or a range meant for one) that the API server would
 * reject. The server answers a malformed `shardSelector` with HTTP 500, so
 * Tessera refuses it before sending.
 */
export class ShardSelectorError extends Error {
  override name = "ShardSelectorError";

  /**
   * @param problem what is wrong, in a few words
   * @param selector the text (or a rendering of the ranges) that was rejected
   * @param position 0-based character offset of the problem in `selector`, when known
   */
  constructor(
    readonly problem: string,
    readonly selector: string,
    readonly position?: number,
  ) {
    super(
      `invalid shard selector ${JSON.stringify(selector)}: ${problem}` +
        (position === undefined ? "" : ` (at character ${position})`) +
        `; ${ACCEPTED_SELECTOR_FORMS}`,
    );
  }
}
