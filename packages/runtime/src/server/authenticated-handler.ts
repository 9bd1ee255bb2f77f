import { silentLogger, type Logger } from "@tessera/core";
import type { EndpointHandler } from "./endpoint-server.js";
import type { SubjectAccessReviewAuthorizer } from "./subject-access-review-authorizer.js";
import type { TokenReviewAuthenticator } from "./token-review-authenticator.js";

/** Options of {@link withAuthenticationAndAuthorization}. */
export interface AuthenticationAndAuthorizationOptions {
  authenticator: Pick<TokenReviewAuthenticator, "authenticate">;
  authorizer: Pick<SubjectAccessReviewAuthorizer, "authorize">;
  logger?: Logger;
}

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Wraps `handler` so only callers the cluster allows reach it, as
 * controller-runtime's `filters.WithAuthenticationAndAuthorization`: the
 * bearer token of the `Authorization` header is authenticated by a
 * TokenReview, and its user authorized by a SubjectAccessReview for the
 * request's path as a non-resource URL with the verb `get`. Answers 401 for
 * a missing or invalid token, 403 for a user not allowed, and 500 (with a
 * structured log) when the API server cannot review; the token is never
 * written to a body or a log.
 */
export function withAuthenticationAndAuthorization(
  handler: EndpointHandler,
  options: AuthenticationAndAuthorizationOptions,
): EndpointHandler {
  const logger = options.logger ?? silentLogger;
  return async (request, response, url) => {
    const token = BEARER.exec(request.headers.authorization ?? "")?.[1];
    const deny = (status: 401 | 403 | 500, body: string) => {
      response
        .writeHead(status, {
          "Content-Type": "text/plain; charset=utf-8",
          ...(status === 401 ? { "WWW-Authenticate": 'Bearer realm="metrics"' } : {}),
        })
        .end(body);
    };
    if (token === undefined) return deny(401, "Unauthorized: send a bearer token\n");
    const verb = "get";
    let stage: "tokenreviews" | "subjectaccessreviews" = "tokenreviews";
    try {
      const authentication = await options.authenticator.authenticate(token);
      if (!authentication.authenticated) {
        logger.debug("metrics: refused a token", { path: url.pathname, reason: authentication.reason });
        return deny(401, "Unauthorized\n");
      }
      const { user } = authentication;
      stage = "subjectaccessreviews";
      const authorization = await options.authorizer.authorize(user, { path: url.pathname, verb });
      if (!authorization.allowed) {
        logger.debug("metrics: refused a user", {
          path: url.pathname,
          user: user.username,
          reason: authorization.reason,
        });
        return deny(403, `Forbidden: user "${user.username}" may not ${verb} ${url.pathname}\n`);
      }
    } catch (error) {
      logger.error("metrics: the API server could not review a request", {
        verb: "create",
        resource: `${stage}.${stage === "tokenreviews" ? "authentication" : "authorization"}.k8s.io`,
        path: url.pathname,
        error: redact(error, token),
      });
      return deny(500, "Internal Server Error: could not review the request with the API server\n");
    }
    await handler(request, response, url);
  };
}

/** The error's message and name, with the token cut out should the API server have echoed it. */
function redact(error: unknown, token: string): { name: string; message: string } {
  const e = error instanceof Error ? error : new Error(String(error));
  return { name: e.name, message: e.message.split(token).join("<redacted>") };
}
