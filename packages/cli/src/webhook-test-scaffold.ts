import type { ApiKind } from "./kind-versions.js";
import type { AdmissionScaffold } from "./webhook-scaffold.js";

/**
 * `test/<kind>.webhook.test.ts`: the webhook behind the real API server.
 * Written once testenv's `installWebhooks` exists; until then, undefined.
 */
export function webhookControlPlaneTest(
  _operator: string,
  _kind: ApiKind,
  _what: AdmissionScaffold,
): string | undefined {
  return undefined;
}
