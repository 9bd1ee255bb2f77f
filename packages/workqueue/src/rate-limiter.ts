/**
 * Decides how long an item waits before it is retried. A work queue asks it
 * on every {@link WorkQueue.addRateLimited} and tells it to
 * {@link RateLimiter.forget} an item once the item was processed successfully.
 */
export interface RateLimiter<T> {
  /** Records one more failure of `item` and returns how long to wait before retrying it, in milliseconds. */
  when(item: T): number;
  /** Clears the failure history of `item`. */
  forget(item: T): void;
  /** How many times `item` has been retried since it was last forgotten. */
  numRequeues(item: T): number;
}
