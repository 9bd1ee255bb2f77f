// What the API server accepts as a label key and a label value
// (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName, IsValidLabelValue).

const NAME_MAX = 63;
const PREFIX_MAX = 253;
const VALUE_MAX = 63;
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE =
  "consist of alphanumeric characters, '-', '_' or '.', and start and end with an alphanumeric character";

/**
 * Why `key` is not a label key (a qualified name: an optional DNS subdomain
 * prefix of at most 253 characters and `/`, then a name of at most 63
 * characters of `[A-Za-z0-9-_.]` starting and ending alphanumeric); empty
 * when it is one.
 */
export function labelKeyProblems(key: string): string[] {
  const parts = key.split("/");
  if (parts.length > 2) {
    return [`a label key has at most one '/' (an optional DNS subdomain prefix, e.g. 'example.com/my-name')`];
  }
  const problems: string[] = [];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === "") problems.push("prefix part must be non-empty");
    else {
      if (prefix.length > PREFIX_MAX)
        problems.push(`prefix part must be no more than ${PREFIX_MAX} characters`);
      if (!DNS_SUBDOMAIN.test(prefix)) {
        problems.push(
          "prefix part must be a DNS-1123 subdomain: lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
        );
      }
    }
  }
  if (name === "") problems.push("name part must be non-empty");
  else if (name.length > NAME_MAX) problems.push(`name part must be no more than ${NAME_MAX} characters`);
  if (!NAME.test(name)) problems.push(`name part must ${NAME_RULE}`);
  return problems;
}

/**
 * Why `value` is not a label value (empty, or at most 63 characters of
 * `[A-Za-z0-9-_.]` starting and ending alphanumeric); empty when it is one.
 */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > VALUE_MAX) problems.push(`must be no more than ${VALUE_MAX} characters`);
  if (value !== "" && !NAME.test(value)) problems.push(`must be empty or ${NAME_RULE}`);
  return problems;
}
