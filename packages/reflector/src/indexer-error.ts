/** Raised for an index name that is not registered, or registered twice. */
export class IndexerError extends Error {
  override name = "IndexerError";
}
