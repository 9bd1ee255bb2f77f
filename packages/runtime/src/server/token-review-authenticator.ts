import { createHash } from "node:crypto";
import type { Clock } from "@tessera/core";
import { collectionPath, defineResource, describeResource, type KubeObject } from "@tessera/client";
import type { KubeTransport } from "@tessera/client";
import { DecisionCache } from "./decision-cache.js";

/** Who a bearer token belongs to, as the API server's TokenReview says. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What {@link TokenReviewAuthenticator.authenticate} answers. */
export type Authentication =
  | { readonly authenticated: true; readonly user: UserInfo }
  | { readonly authenticated: false; readonly reason: string };

/** A TokenReview (`authentication.k8s.io/v1`), as far as the authenticator writes and reads it. */
export interface TokenReview extends KubeObject {
  spec: { token: string; audiences?: string[] };
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

/** The TokenReview resource: created only, never stored by the API server. */
const TokenReviews = defineResource<TokenReview>({
  group: "authentication.k8s.io",
  version: "v1",
  kind: "TokenReview",
  plural: "tokenreviews",
  scope: "Cluster",
});

/** Options of a {@link TokenReviewAuthenticator}. */
export interface TokenReviewAuthenticatorOptions {
  /** The API server connection to review through: the manager's own, with its credentials. */
  transport: KubeTransport;
  clock: Clock;
  /** How long an accepted token's user is kept. Default 60000 (controller-runtime's one minute). */
  ttlMs?: number;
  /** How long a refused token stays refused. Default 10000. */
  failureTtlMs?: number;
  /** Audiences the token must be meant for; default the API server's own. */
  audiences?: readonly string[];
}

/**
 * Authenticates bearer tokens by asking the API server (a TokenReview), as
 * controller-runtime's metrics filter and kube-rbac-proxy do, so any token
 * the cluster accepts (a service account's, an OIDC user's) works.
 * Decisions are cached by the token's SHA-256, never the token itself.
 * An error of the API server is thrown (an `ApiError` naming the verb and
 * resource) and not cached.
 */
export class TokenReviewAuthenticator {
  private readonly cache: DecisionCache<Authentication>;

  constructor(private readonly options: TokenReviewAuthenticatorOptions) {
    this.cache = new DecisionCache({ clock: options.clock });
  }

  async authenticate(token: string, signal?: AbortSignal): Promise<Authentication> {
    const key = createHash("sha256").update(token).digest("hex");
    const cached = this.cache.get(key);
    if (cached) return cached;
    // A bare POST: the API server refuses metadata on reviews, which Client.create would require.
    const review = await this.options.transport.call<TokenReview>(
      { verb: "create", resource: describeResource(TokenReviews) },
      {
        method: "POST",
        path: collectionPath(TokenReviews),
        body: {
          apiVersion: TokenReviews.apiVersion,
          kind: TokenReviews.kind,
          spec: { token, ...(this.options.audiences ? { audiences: [...this.options.audiences] } : {}) },
        },
        signal,
      },
    );
    const user = review.status?.user;
    const answer: Authentication =
      review.status?.authenticated && user?.username
        ? {
            authenticated: true,
            user: {
              username: user.username,
              ...(user.uid ? { uid: user.uid } : {}),
              groups: user.groups ?? [],
              ...(user.extra ? { extra: user.extra } : {}),
            },
          }
        : { authenticated: false, reason: review.status?.error ?? "the token is not valid" };
    this.cache.set(
      key,
      answer,
      answer.authenticated ? (this.options.ttlMs ?? 60_000) : (this.options.failureTtlMs ?? 10_000),
    );
    return answer;
  }
}
