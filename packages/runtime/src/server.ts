/**
 * @tessera/runtime/server: the HTTP(S) endpoints a manager serves (health
 * probes, Prometheus metrics) and their parts, for an operator that serves
 * an endpoint of its own the same way: authentication by TokenReview,
 * authorization by SubjectAccessReview, serving certificates.
 */
export { HealthChecks } from "./server/health-checks.js";
export type { Check, CheckResult, ProbeAnswer } from "./server/health-checks.js";
export { EndpointServer } from "./server/endpoint-server.js";
export type { EndpointServerOptions, EndpointHandler } from "./server/endpoint-server.js";
export { parseBindAddress } from "./server/bind-address.js";
export type { BindAddress } from "./server/bind-address.js";
export { PrometheusMetrics } from "./server/prometheus-metrics.js";
export { DecisionCache } from "./server/decision-cache.js";
export type { DecisionCacheOptions } from "./server/decision-cache.js";
export { TokenReviewAuthenticator } from "./server/token-review-authenticator.js";
export type {
  Authentication,
  TokenReview,
  TokenReviewAuthenticatorOptions,
  UserInfo,
} from "./server/token-review-authenticator.js";
export { SubjectAccessReviewAuthorizer } from "./server/subject-access-review-authorizer.js";
export type {
  Authorization,
  SubjectAccessReview,
  SubjectAccessReviewAuthorizerOptions,
} from "./server/subject-access-review-authorizer.js";
export { withAuthenticationAndAuthorization } from "./server/authenticated-handler.js";
export type { AuthenticationAndAuthorizationOptions } from "./server/authenticated-handler.js";
export { readServingCertificate } from "./server/serving-certificate.js";
export type { ServingCertificate } from "./server/serving-certificate.js";
export {
  selfSignedCertificate,
  certificateAuthority,
  signedCertificate,
} from "./server/self-signed-certificate.js";
export type {
  SelfSignedCertificateOptions,
  CertificateAuthorityOptions,
  SignedCertificateOptions,
} from "./server/self-signed-certificate.js";
