/**
 * @tessera/runtime/server: the HTTP(S) endpoints a manager serves (health
 * probes, Prometheus metrics, admission and conversion webhooks) and their
 * parts, for an operator that serves an endpoint of its own the same way:
 * authentication by TokenReview, authorization by SubjectAccessReview,
 * serving certificates and where they come from, review decoding.
 */
export { HealthChecks } from "./server/health-checks.js";
export type { Check, CheckResult, ProbeAnswer } from "./server/health-checks.js";
export { EndpointServer } from "./server/endpoint-server.js";
export type { EndpointServerOptions, EndpointHandler } from "./server/endpoint-server.js";
export { parseBindAddress } from "./server/bind-address.js";
export type { BindAddress } from "./server/bind-address.js";
export { PrometheusMetrics } from "./server/prometheus-metrics.js";
export { PrometheusMeterProvider } from "./server/prometheus-meter-provider.js";
export { OpenTelemetrySdkMetrics } from "./server/opentelemetry-sdk-metrics.js";
export type { OpenTelemetrySdkMetricsOptions } from "./server/opentelemetry-sdk-metrics.js";
export type { MetricsEndpoint } from "./server/metrics-endpoint.js";
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
export type { CertificateSource } from "./webhook/certificate-source.js";
export { FileCertificateSource } from "./webhook/file-certificate-source.js";
export type { FileCertificateSourceOptions } from "./webhook/file-certificate-source.js";
export { SecretCertificateSource, DEFAULT_ROTATION } from "./webhook/secret-certificate-source.js";
export type { SecretCertificateSourceOptions } from "./webhook/secret-certificate-source.js";
export { secretCertificateSource } from "./webhook/secret-certificate-wiring.js";
export { CaBundleInjector } from "./webhook/ca-bundle-injector.js";
export type { CaBundle, CaBundleInjectorOptions } from "./webhook/ca-bundle-injector.js";
export { WebhookCertificateError } from "./webhook/webhook-certificate-error.js";
export type { CertificateRotationOptions } from "./webhook/certificate-rotation.js";
export {
  WebhookServer,
  ADMISSION_BODY_LIMIT_BYTES,
  CONVERSION_BODY_LIMIT_BYTES,
} from "./webhook/webhook-server.js";
export type { WebhookServerOptions } from "./webhook/webhook-server.js";
export { AdmissionHandler, handlerDeadlineMs } from "./webhook/admission-handler.js";
export type { AdmissionHandlerOptions } from "./webhook/admission-handler.js";
export { Converter } from "./webhook/converter.js";
export { WebhookMetrics } from "./webhook/webhook-metrics.js";
export { WebhookRequestError } from "./webhook/webhook-request-error.js";
export {
  decodeAdmissionReview,
  admissionReviewOf,
  ADMISSION_REVIEW_API_VERSION,
} from "./webhook/admission-review.js";
export {
  decodeConversionReview,
  conversionReviewOf,
  CONVERSION_REVIEW_API_VERSION,
} from "./webhook/conversion-review.js";
export type { ConversionReview, ConversionRequest, ConversionResponse } from "./webhook/conversion-review.js";
export { jsonPatchDiff } from "./webhook/json-patch-diff.js";
