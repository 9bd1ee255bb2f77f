import type { KubeObject, ObjectList } from "@tessera/client";
import type { ListerWatcher } from "./lister-watcher.js";
import type { ListOptions } from "./list-options.js";
import { isResourceExpired } from "./list-watch-error.js";

/** client-go's default page size. */
export const DEFAULT_PAGE_SIZE = 500;

/** What the page size decision looks at. */
export interface PageSizeInputs {
  /** A page size the user set; it wins (and forces every list to etcd). */
  userPageSize: number | undefined;
  /** Whether a list at resourceVersion "0" once came back paginated (the server has no usable watch cache). */
  paginatedResult: boolean;
  /** The resourceVersion the list is made at. */
  resourceVersion: string;
}

/**
 * The page size (`limit`) for a relist, 0 meaning "send no limit":
 * 1. a user page size wins;
 * 2. once a list at RV "0" came back paginated, keep the default size;
 * 3. an RV set and not "0": no limit, so the watch cache can serve the list
 *    whole from memory (a paginated list always goes to etcd);
 * 4. otherwise (RV "0", or "" for a consistent read): the default, 500. The
 *    watch cache ignores it at "0"; without a cache it keeps pages small.
 */
export function choosePageSize(inputs: PageSizeInputs): number {
  if (inputs.userPageSize !== undefined && inputs.userPageSize > 0) return inputs.userPageSize;
  if (inputs.paginatedResult) return DEFAULT_PAGE_SIZE;
  if (inputs.resourceVersion !== "" && inputs.resourceVersion !== "0") return 0;
  return DEFAULT_PAGE_SIZE;
}

/** The result of {@link listAllPages}. */
export interface PagedList<T> {
  items: T[];
  /** The list's resourceVersion (of its last page). */
  resourceVersion: string;
  /** Whether the server answered with more than one page (it sent a continue token). */
  paginated: boolean;
  /** How many requests the list took. */
  pages: number;
}

/**
 * Lists a whole collection, following `metadata.continue` page by page. The
 * first page is sent with `options` (and `limit` when `pageSize` > 0); later
 * pages with the continue token and without resourceVersion, as the API
 * requires. A 410 on a continue token (the snapshot was compacted away)
 * restarts the list from scratch, once, as one unpaginated request at the
 * original resourceVersion. `onPage` sees each page's items before the next is
 * asked for (for transforms that free memory early).
 */
export async function listAllPages<T extends KubeObject>(
  lw: ListerWatcher<T>,
  options: ListOptions,
  pageSize: number,
  signal?: AbortSignal,
  onPage?: (items: T[]) => T[],
): Promise<PagedList<T>> {
  const first: ListOptions = { ...options };
  delete first.continue;
  if (pageSize > 0) first.limit = pageSize;
  else delete first.limit;
  let page: ObjectList<T> = await lw.list(first, signal);
  let pages = 1;
  const items: T[] = [];
  const take = (list: ObjectList<T>): void => {
    const got = onPage ? onPage(list.items) : list.items;
    for (const item of got) items.push(item);
  };
  let paginated = false;
  for (;;) {
    take(page);
    const token = page.metadata?.continue;
    if (!token) break;
    paginated = true;
    const next: ListOptions = { ...first, continue: token };
    delete next.resourceVersion;
    delete next.resourceVersionMatch;
    try {
      page = await lw.list(next, signal);
      pages++;
    } catch (err) {
      if (!isResourceExpired(err)) throw err;
      const whole: ListOptions = { ...options };
      delete whole.continue;
      delete whole.limit;
      const list = await lw.list(whole, signal);
      items.length = 0;
      take(list);
      return { items, resourceVersion: list.metadata?.resourceVersion ?? "", paginated, pages: pages + 1 };
    }
  }
  return { items, resourceVersion: page.metadata?.resourceVersion ?? "", paginated, pages };
}
