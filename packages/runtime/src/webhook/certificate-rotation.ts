/**
 * When the operator's webhook certificates change, as a pure function of
 * what the Secret holds and the time, so every replica that reads the same
 * Secret plans the same step (and only one of them writes it: the Secret is
 * updated with a resourceVersion precondition).
 *
 * The serving certificate is renewed at {@link RENEW_AT_FRACTION} of its
 * life by the same CA: clients trust it at once. The CA is renewed in three
 * steps an overlap apart, so that no client ever meets a certificate from a
 * CA it does not trust yet, nor loses the CA of a certificate still served:
 *
 * 1. `add-ca`: a new CA joins the bundle (old + new), the old one still signs;
 *    the bundle reaches the webhook configurations and the CRDs.
 * 2. `switch-ca`: after the overlap, the new CA signs a new serving
 *    certificate, which every replica picks up; the bundle is still old + new.
 * 3. `retire-ca`: after another overlap, the old CA leaves the bundle.
 */

/** The durations of certificate rotation. */
export interface CertificateRotationOptions {
  /** How long a serving certificate is valid. */
  servingValidityMs: number;
  /** How long a CA is valid; more than six overlaps, so its rotation ends before it expires. */
  caValidityMs: number;
  /**
   * How long both the old and the new CA stay trusted before each step of a
   * CA rotation: longer than a replica takes to read the Secret and a CA
   * bundle takes to reach the API server.
   */
  overlapMs: number;
}

/** A serving certificate and its CA are renewed at two thirds of their life, as kubelet's. */
export const RENEW_AT_FRACTION = 2 / 3;

/** When a certificate is valid. */
export interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** What the rotation looks at in the Secret. */
export interface RotationFacts {
  /** The CA that signs the serving certificate. */
  readonly signer: Validity;
  readonly serving: Validity & {
    /** Signed by `signer` and naming every host wanted. */
    readonly matches: boolean;
  };
  /** A CA added to the bundle and not yet signing (after `add-ca`). */
  readonly next?: Validity;
  /** The bundle still holds a CA other than the signer (after `switch-ca`). */
  readonly retiring: boolean;
  /** When the current CA step (`add-ca` or `switch-ca`) was taken. */
  readonly phaseSince?: Date;
}

/** A change of the Secret. */
export type RotationStep = "create" | "renew-serving" | "add-ca" | "switch-ca" | "retire-ca";

/** The step to take now, or when to look again. */
export type RotationPlan =
  { readonly step: RotationStep } | { readonly step?: undefined; readonly dueAt: Date };

/** The moment at {@link RENEW_AT_FRACTION} of `validity`. */
export function renewAt(validity: Validity): Date {
  const from = validity.notBefore.getTime();
  return new Date(from + RENEW_AT_FRACTION * (validity.notAfter.getTime() - from));
}

/**
 * The step to take at `now` given `facts` (undefined: no Secret, or one
 * that holds no usable certificates), else when the next one is due.
 */
export function planRotation(
  facts: RotationFacts | undefined,
  now: Date,
  options: CertificateRotationOptions,
): RotationPlan {
  const t = now.getTime();
  if (facts === undefined || t >= facts.signer.notAfter.getTime()) return { step: "create" };
  const phaseEnd =
    (facts.next !== undefined || facts.retiring) && facts.phaseSince !== undefined
      ? facts.phaseSince.getTime() + options.overlapMs
      : undefined;
  // A step of a CA rotation without its start time (edited by hand) is taken at once.
  const phaseDue = (facts.next !== undefined || facts.retiring) && (phaseEnd === undefined || t >= phaseEnd);
  if (facts.next !== undefined && phaseDue) return { step: "switch-ca" };
  const servingRenewal = renewAt(facts.serving).getTime();
  if (!facts.serving.matches || t >= servingRenewal) return { step: "renew-serving" };
  if (facts.next === undefined && facts.retiring && phaseDue) return { step: "retire-ca" };
  const caRenewal = renewAt(facts.signer).getTime();
  const steady = facts.next === undefined && !facts.retiring;
  if (steady && t >= caRenewal) return { step: "add-ca" };
  const due = Math.min(servingRenewal, steady ? caRenewal : (phaseEnd ?? t), facts.signer.notAfter.getTime());
  return { dueAt: new Date(due) };
}

/** Throws a RangeError naming the setting when the durations cannot rotate safely. */
export function checkRotationOptions(options: CertificateRotationOptions, pollIntervalMs: number): void {
  const { servingValidityMs, caValidityMs, overlapMs } = options;
  const problems: string[] = [];
  if (overlapMs < 2 * pollIntervalMs) {
    problems.push(
      `overlapMs (${overlapMs}) must be at least twice pollIntervalMs (${pollIntervalMs}), so every replica reads each step before the next`,
    );
  }
  // Integers, not RENEW_AT_FRACTION's float: a third of the life must exceed two overlaps (and the poll interval).
  if (caValidityMs <= 6 * overlapMs) {
    problems.push(
      `caValidityMs (${caValidityMs}) must exceed six times overlapMs (${overlapMs}), so a CA rotation (two overlaps from two thirds of its life) ends before the CA expires`,
    );
  }
  if (servingValidityMs <= 3 * pollIntervalMs) {
    problems.push(
      `servingValidityMs (${servingValidityMs}) must exceed three times pollIntervalMs (${pollIntervalMs}), so every replica reads a renewed certificate before the old one expires`,
    );
  }
  if (problems.length > 0) {
    throw new RangeError(`webhook.certificates: ${problems.join("; ")}`);
  }
}
