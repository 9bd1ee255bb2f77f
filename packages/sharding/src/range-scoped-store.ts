import type { DeletedFinalStateUnknown, ReflectorStore } from "@tessera/reflector";
import type { KubeObject } from "@tessera/client";
import type { ClaimOwner, ShardLedger } from "./shard-ledger.js";

/**
 * The store one range's reflector writes into: a view of the shared store
 * limited to that range. Its `replace` touches only the keys of its own
 * range (adds and updates for the items, tombstone deletes for its keys
 * that are missing), so a range's relist never wipes the other ranges; the
 * shared store's own `replace` is never called. Once closed (its range
 * stopped or split), writes are ignored: whatever the stopped reflector
 * still had in flight is covered by the range's successor.
 */
export class RangeScopedStore<T extends KubeObject> implements ReflectorStore<T>, ClaimOwner {
  claims = 0;
  private closed = false;

  /**
   * @param ledger the shared store's ledger
   * @param onReplace called after each relist of the range was written (its reflector is synced by the next microtask)
   */
  constructor(
    private readonly ledger: ShardLedger<T>,
    private readonly onReplace: () => void = () => {},
  ) {}

  /** Whether writes are ignored from now on. */
  get isClosed(): boolean {
    return this.closed;
  }

  add(obj: T): void {
    if (!this.closed) this.ledger.put(this, obj);
  }

  update(obj: T): void {
    if (!this.closed) this.ledger.put(this, obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    if (!this.closed) this.ledger.remove(this, obj);
  }

  replace(items: readonly T[], resourceVersion: string): void {
    if (this.closed) return;
    this.ledger.replace(this, items, resourceVersion);
    this.onReplace();
  }

  /** Ignores every later write. */
  close(): void {
    this.closed = true;
  }
}
