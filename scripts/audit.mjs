// Dependency audit for the test command (scripts/test.sh). Asks the npm
// registry's audit endpoint about the lockfile twice: the production
// dependencies of the shipped packages (a high or critical advisory fails the
// run) and the development dependencies (reported, never failing: they do not
// ship). When the endpoint cannot be reached or answers with an error, it says
// so and exits 0, because an offline build must still be able to test.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const FAILING = new Set(["high", "critical"]);

/** Runs `npm audit --json` over one dependency set; returns the parsed report or the reason there is none. */
function audit(args) {
  // A saved `npm audit --json` report in place of the registry, to check this script's verdicts offline.
  if (process.env.TESSERA_AUDIT_REPORT)
    return { report: JSON.parse(readFileSync(process.env.TESSERA_AUDIT_REPORT, "utf8")) };
  const r = spawnSync("npm", ["audit", "--json", ...args], { encoding: "utf8" });
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    return { unreachable: `npm audit printed no JSON (exit ${r.status}): ${r.stderr.trim().split("\n")[0]}` };
  }
  if (report.error || report.message)
    return { unreachable: report.message ?? report.error?.summary ?? "the audit endpoint returned an error" };
  return { report };
}

/** One line per vulnerable package at or above the given severities. */
function findings(report, severities) {
  return Object.values(report.vulnerabilities ?? {})
    .filter((v) => severities.has(v.severity))
    .map((v) => {
      const via = v.via.map((x) => (typeof x === "string" ? x : `${x.title} (${x.url})`)).join("; ");
      return `  ${v.severity}: ${v.name} ${v.range}: ${via}${v.fixAvailable ? " (a fix is available: npm audit fix)" : ""}`;
    });
}

let failed = false;
for (const [label, args, fails] of [
  ["production dependencies", ["--omit=dev"], true],
  ["development dependencies", ["--include=dev"], false],
]) {
  const { report, unreachable } = audit(args);
  if (unreachable) {
    console.log(
      `audit: ${label} NOT CHECKED: the registry's audit endpoint is unreachable or erroring (${unreachable}); continuing.`,
    );
    continue;
  }
  const all = findings(report, new Set(["low", "moderate", "high", "critical"]));
  const serious = findings(report, FAILING);
  const counts = report.metadata?.vulnerabilities ?? {};
  console.log(`audit: ${label}: ${JSON.stringify(counts)}`);
  if (serious.length > 0) {
    console.log(`audit: ${label}: ${serious.length} package(s) with a high or critical advisory:`);
    console.log(serious.join("\n"));
    if (fails) failed = true;
    else console.log("audit: development dependencies do not ship; reported, not failing.");
  } else if (all.length > 0) {
    console.log(`audit: ${label}: lower-severity advisories only (not failing):\n${all.join("\n")}`);
  }
}
// bench/peers/client-go and kube-rs: govulncheck and cargo-audit need their
// vulnerability databases from the network, which is not assumed here.
console.log(
  "audit: bench/peers (Go, Rust) not audited: govulncheck and cargo-audit need a network vulnerability database.",
);
if (failed) {
  console.log(
    "audit: FAILED: a shipped package depends on a package with a high or critical advisory; upgrade it or run npm audit fix.",
  );
  process.exit(1);
}
