/**
 * A tombstone: the object with key `key` was deleted, but its DELETE event
 * was never seen (it vanished across a relist). `obj` is the last state known
 * for it, which may be stale.
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}
