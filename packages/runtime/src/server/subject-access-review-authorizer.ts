import type { Clock } from "@tessera/core";
import { collectionPath, defineResource, describeResource, type KubeObject } from "@tessera/client";
import type { KubeTransport } from "@tessera/client";
import { DecisionCache } from "./decision-cache.js";
import type { UserInfo } from "./token-review-authenticator.js";

/** What {@link SubjectAccessReviewAuthorizer.authorize} answers. */
export interface Authorization {
  readonly allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  readonly reason?: string;
}

/** A SubjectAccessReview (`authorization.k8s.io/v1`) for a non-resource URL. */
export interface SubjectAccessReview extends KubeObject {
  spec: {
    user: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
    nonResourceAttributes: { path: string; verb: string };
  };
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** The SubjectAccessReview resource: created only, never stored by the API server. */
const SubjectAccessReviews = defineResource<SubjectAccessReview>({
  group: "authorization.k8s.io",
  version: "v1",
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  scope: "Cluster",
});

/** Options of a {@link SubjectAccessReviewAuthorizer}. */
export interface SubjectAccessReviewAuthorizerOptions {
  /** The API server connection to review through: the manager's own, with its credentials. */
  transport: KubeTransport;
  clock: Clock;
  /** How long an allow is kept. Default 300000 (controller-runtime's five minutes). */
  allowTtlMs?: number;
  /** How long a deny is kept. Default 30000 (controller-runtime's 30 seconds). */
  denyTtlMs?: number;
}

/**
 * Authorizes a user for a non-resource URL and verb (`get` on `/metrics`)
 * by asking the API server (a SubjectAccessReview), so RBAC decides who may
 * scrape: a ClusterRole with `nonResourceURLs: ["/metrics"]`, `verbs: ["get"]`.
 * Decisions are cached per user, path and verb; an error of the API server
 * is thrown and not cached.
 */
export class SubjectAccessReviewAuthorizer {
  private readonly cache: DecisionCache<Authorization>;

  constructor(private readonly options: SubjectAccessReviewAuthorizerOptions) {
    this.cache = new DecisionCache({ clock: options.clock });
  }

  async authorize(
    user: UserInfo,
    request: { readonly path: string; readonly verb: string },
    signal?: AbortSignal,
  ): Promise<Authorization> {
    const key = JSON.stringify([
      user.username,
      user.uid ?? "",
      [...user.groups].sort(),
      user.extra ?? {},
      request.path,
      request.verb,
    ]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    // A bare POST: the API server refuses metadata on reviews, which Client.create would require.
    const review = await this.options.transport.call<SubjectAccessReview>(
      { verb: "create", resource: describeResource(SubjectAccessReviews) },
      {
        method: "POST",
        path: collectionPath(SubjectAccessReviews),
        body: {
          apiVersion: SubjectAccessReviews.apiVersion,
          kind: SubjectAccessReviews.kind,
          spec: {
            user: user.username,
            ...(user.uid ? { uid: user.uid } : {}),
            groups: [...user.groups],
            ...(user.extra ? { extra: user.extra } : {}),
            nonResourceAttributes: { path: request.path, verb: request.verb },
          },
        },
        signal,
      },
    );
    const answer: Authorization = {
      allowed: review.status?.allowed === true,
      ...(review.status?.reason ? { reason: review.status.reason } : {}),
    };
    this.cache.set(
      key,
      answer,
      answer.allowed ? (this.options.allowTtlMs ?? 300_000) : (this.options.denyTtlMs ?? 30_000),
    );
    return answer;
  }
}
