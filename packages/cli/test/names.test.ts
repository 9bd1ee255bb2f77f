import { strict as assert } from "node:assert";
import { checkGroup, checkKind, checkVersion, CliError, kindNames, pluralize } from "../src/index.js";

describe("names", () => {
  it("derives the plural, singular and handle the way kubebuilder spells them", () => {
    assert.deepEqual(kindNames("Widget"), {
      kind: "Widget",
      singular: "widget",
      plural: "widgets",
      handle: "Widgets",
      listKind: "WidgetList",
    });
    assert.equal(kindNames("Policy").handle, "Policies");
    assert.equal(kindNames("CronTab").handle, "CronTabs");
    assert.equal(kindNames("Ingress").plural, "ingresses");
    assert.equal(kindNames("Gateway").plural, "gateways");
    assert.equal(kindNames("Box", "boxen").handle, "Boxen");
    assert.equal(pluralize("batch"), "batches");
  });

  it("refuses bad kinds, groups and versions with the rule they break", () => {
    const refused = (f: () => void, rule: RegExp) =>
      assert.throws(f, (e: Error) => e instanceof CliError && e.exitCode === 2 && rule.test(e.message));
    refused(() => checkKind("widget"), /UpperCamelCase/);
    refused(() => checkKind("My-Kind"), /only letters and digits/);
    refused(() => checkGroup("example"), /at least one dot/);
    refused(() => checkGroup("Example.com"), /lower-case DNS subdomain/);
    refused(() => checkGroup("apps.k8s.io"), /reserved for the Kubernetes project/);
    refused(() => checkVersion("1.0"), /v<N>alpha<M>/);
    refused(() => checkVersion("v1beta"), /v<N>beta<M>/);
    checkGroup("tessera.example.io");
    checkVersion("v2alpha3");
  });
});
