import { CliError } from "./cli-error.js";

/** The names of one kind, as the CRD, the TypeScript and the file layout spell them. */
export interface KindNames {
  /** `Widget` */
  readonly kind: string;
  /** `widget`: the singular, and the stem of its files. */
  readonly singular: string;
  /** `widgets` */
  readonly plural: string;
  /** `Widgets`: the resource handle's name in TypeScript. */
  readonly handle: string;
  /** `WidgetList` */
  readonly listKind: string;
}

const KIND = /^[A-Z][A-Za-z0-9]*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/** Refuses a kind that is not UpperCamelCase ASCII, naming the rule. */
export function checkKind(kind: string): void {
  if (!KIND.test(kind) || kind.length > 63) {
    throw new CliError(
      `invalid kind "${kind}": a kind is UpperCamelCase, starts with an upper-case letter, has only letters and digits and at most 63 characters (e.g. Widget, CronTab)`,
    );
  }
}

/** Refuses a group that is not a DNS subdomain with at least one dot. */
export function checkGroup(group: string): void {
  const labels = group.split(".");
  if (group.length > 253 || labels.length < 2 || !labels.every((l) => DNS_LABEL.test(l) && l.length <= 63)) {
    throw new CliError(
      `invalid group "${group}": an API group is a lower-case DNS subdomain with at least one dot, labels of a-z, 0-9 and '-' (e.g. example.com, apps.my-company.io)`,
    );
  }
  if (group.endsWith(".k8s.io") || group.endsWith(".kubernetes.io") || group === "k8s.io") {
    throw new CliError(
      `invalid group "${group}": *.k8s.io and *.kubernetes.io are reserved for the Kubernetes project (the API server would demand an api-approved annotation); use a domain you own`,
    );
  }
}

/** Refuses a version the API server would not sort as a Kubernetes version. */
export function checkVersion(version: string): void {
  if (!VERSION.test(version)) {
    throw new CliError(
      `invalid version "${version}": a Kubernetes API version is v<N>, v<N>alpha<M> or v<N>beta<M> (e.g. v1, v1alpha1, v2beta3)`,
    );
  }
}

/** Refuses a project name npm and Kubernetes (as the Deployment's name) would not both take. */
export function checkProjectName(name: string): void {
  if (!DNS_LABEL.test(name) || name.length > 53) {
    throw new CliError(
      `invalid project name "${name}": it names the npm package and the Deployment, so it must be a lower-case DNS label of at most 53 characters (a-z, 0-9, '-'; e.g. widget-operator)`,
    );
  }
}

/** English plural of a lower-case word, as kubebuilder's defaults spell it. */
export function pluralize(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/** Every name of `kind`; `plural` overrides the derived one. */
export function kindNames(kind: string, plural?: string): KindNames {
  checkKind(kind);
  const singular = kind.toLowerCase();
  const p = plural ?? pluralize(singular);
  if (!DNS_LABEL.test(p)) {
    throw new CliError(`invalid plural "${p}": a resource name is a lower-case DNS label (e.g. widgets)`);
  }
  return { kind, singular, plural: p, handle: pascal(p, kind), listKind: `${kind}List` };
}

/** The handle: the kind's own casing with the plural's ending (`CronTab` -> `CronTabs`, `Policy` -> `Policies`). */
function pascal(plural: string, kind: string): string {
  const lower = kind.toLowerCase();
  let common = 0;
  while (common < lower.length && plural[common] === lower[common]) common++;
  return kind.slice(0, common) + plural.slice(common);
}

/** The template tokens of one kind (`__KIND__`, `__PLURAL__`, ...), as templates/api uses them. */
export function kindTokens(
  project: string,
  group: string,
  version: string,
  names: KindNames,
): Record<string, string> {
  return {
    NAME: project,
    GROUP: group,
    VERSION: version,
    KIND: names.kind,
    // "An Order", "A Widget": by the first letter, which is right for most kinds.
    A_KIND: `${/^[AEIOU]/.test(names.kind) ? "An" : "A"} ${names.kind}`,
    SINGULAR: names.singular,
    PLURAL: names.plural,
    HANDLE: names.handle,
  };
}
